internal import CLibxml2
import HTTPCore

/// XML → JSON in xmltodict's convention (DESIGN §5): element → key, attributes
/// `@name` first, text `#text` last (text alone → a plain string), repeated siblings
/// → array at the first one's position, `force_array` paths always arrays, empty
/// element → null, all leaves strings, CDATA is text, whitespace around text trimmed.
public enum XMLTranscoder {
    public static func transcode(_ body: [UInt8], options: XMLOptions = XMLOptions(),
                                 maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                                 budget: OutputBudget? = nil) throws(TranscodeError) -> NormalizedJSON {
        // The JSON is written straight into the array returned, given the input's size (XML
        // is the wordier form); only output that outgrows it is copied once more.
        var failure: TranscodeError?
        var builder: XMLJSONBuilder?
        var json = [UInt8](unsafeUninitializedCapacity: body.count + BodyRoom.bytes) { memory, initialized in
            let sink = XMLJSONBuilder(options: options, output: memory, maxDepth: maxDepth,
                                      budget: budget ?? OutputBudget(input: body.count))
            builder = sink
            do throws(TranscodeError) {
                try XMLSAXParser.parse(body, sink: sink)
                try sink.core.finish()
            } catch {
                failure = error
                return
            }
            if sink.core.out.isBorrowed { initialized = sink.core.out.count }
        }
        if let failure { throw failure }
        guard let builder, !builder.core.out.isBorrowed else { return NormalizedJSON(trusted: json) }
        // Outgrown: the array's memory goes before the copy is made.
        json = []
        return NormalizedJSON(trusted: builder.core.out.array)
    }
}

/// The SAX sink. All state lives in one struct, and the class skips dynamic
/// exclusivity checks (they cost ~40% of the time when every property had one).
final class XMLJSONBuilder: XMLEventSink {
    // Only libxml2's callbacks on one thread touch it, one at a time.
    @exclusivity(unchecked) var core: XMLJSONCore

    init(options: XMLOptions, output: UnsafeMutableBufferPointer<UInt8>, maxDepth: Int, budget: OutputBudget) {
        core = XMLJSONCore(options: options, output: output, maxDepth: maxDepth, budget: budget)
    }

    override func startElement(_ tag: XMLStartTag) throws(TranscodeError) { try core.startElement(tag) }
    override func endElement() throws(TranscodeError) { try core.endElement() }
    override func characters(_ bytes: UnsafeBufferPointer<UInt8>) { core.characters(bytes) }

    override func saxHandler() -> xmlSAXHandler {
        var h = super.saxHandler()
        h.startElementNs = { ctx, localname, prefix, _, nbNamespaces, namespaces, nbAttributes, _, attributes in
            XMLEventSink.with(ctx, as: XMLJSONBuilder.self) {
                $0.start(XMLStartTag(localname, prefix, nbNamespaces, namespaces, nbAttributes, attributes))
            }
        }
        h.endElementNs = { ctx, _, _, _ in XMLEventSink.with(ctx, as: XMLJSONBuilder.self) { $0.end() } }
        h.characters = { ctx, text, length in XMLEventSink.with(ctx, as: XMLJSONBuilder.self) { $0.text(text, length) } }
        h.cdataBlock = h.characters
        return h
    }
}

/// Writes the JSON as the document streams by. A child's key is written when it
/// starts; a run of same-named siblings becomes an array in place (the first value is
/// shifted by one byte for the `[`). Only a name that repeats after a different one
/// (`<a/><b/><a/>`) needs regrouping, and only that element's bytes are rewritten.
struct XMLJSONCore: ~Copyable {
    /// 40 bytes (offsets fit 32 bits: see `maxOffset`; text and path stay under the
    /// input's size): one is written per element start and read back at its end.
    struct Frame {
        var start: Int32          // where this element's value begins in `out`
        var attributesEnd: Int32  // end of `{"@a":"v"` when attributes were written
        var serial: Int32         // marks names seen among this element's children
        var textStart: Int32
        var pathLength: Int32
        var childStart: Int32     // first record in `children`
        var members: Int32 = 0
        var lastName: Int32 = -1
        var opened = false        // `{` written
        var runOpen = false       // the last child group is an array still open
        var needsRegroup = false
        /// A descendant wrote `seenIn`, so a mark of this element's may have been
        /// overwritten: its children are checked for a repeated name when it ends.
        var marksAtRisk = false
    }
    /// One per run of same-named siblings (`<a/><a/>…` is one run, written as an array
    /// in place) that is still open or may be regrouped: the run's values, `v1,…,vn`,
    /// start at `valueStart` and end where the next record's separator and key begin (see
    /// `valueEnd`), or at the end of `out` for the last. 8 bytes, since `<a/><b/>…` keeps
    /// one for every 4 input bytes: names fit 16 bits (at most `maxNames`, plus one
    /// element's 257, before the check), offsets 32 (`out` stays under `maxOffset`).
    struct Child {
        var name: UInt16
        var flags: UInt16
        var valueStart: Int32
        static let forcedFlag: UInt16 = 1, severalFlag: UInt16 = 2
        /// A separator and the key were written before the value (not so once the parent
        /// is known to regroup), and a `[` right before it.
        static let keyedFlag: UInt16 = 4, bracketFlag: UInt16 = 8
        var forced: Bool { flags & Self.forcedFlag != 0 }
        /// The run holds more than one member.
        var several: Bool { flags & Self.severalFlag != 0 }
    }
    static let maxOffset = Int(Int32.max) >> 1
    /// Distinct element and attribute names a document may use. libxml2 (2.9) interns
    /// names in a hash table that stops growing at 16,384 buckets, so a document of
    /// ever-new names costs quadratic time there; real documents use a few hundred.
    static let maxNames = 50_000   // < UInt16.max - 257: see Child

    let strip: Bool
    let forced: Set<[UInt8]>
    let hasForced: Bool
    let maxDepth: Int
    /// Charged at every element's start and end: between two charges the output grows
    /// by one element's own bytes, which are linear in its input.
    let budget: OutputBudget
    /// The budget's limit and `maxOffset`, whichever is lower: one compare per charge.
    let outLimit: Int
    var out: ByteBuffer
    var text = ByteBuffer(capacity: 4096)
    // On FlatArray: Array's generic removeLast was 5 % of `<a/><a/>…`.
    var frames = FlatArray<Frame>()
    var children = FlatArray<Child>()
    var path: [UInt8] = []
    var names = NameTable()
    // Per name (FlatArray: no uniqueness or bounds checks per element).
    var seenIn = FlatArray<Int32>()
    var groupOf = FlatArray<Int32>()
    var serials: Int32 = 0

    init(options: XMLOptions, output: UnsafeMutableBufferPointer<UInt8>, maxDepth: Int, budget: OutputBudget) {
        self.maxDepth = maxDepth
        self.budget = budget
        outLimit = min(budget.limit, Self.maxOffset)
        strip = options.namespaces == .strip
        forced = Set(options.forceArray.map { Array($0.utf8) })
        hasForced = !forced.isEmpty
        out = ByteBuffer(into: output)
        frames.append(Frame(start: 0, attributesEnd: 0, serial: 0, textStart: 0, pathLength: 0, childStart: 0))
    }

    /// Closes the document; the JSON is then `out`.
    mutating func finish() throws(TranscodeError) {
        guard frames.count == 1, frames[0].members > 0 else { throw TranscodeError("XML document has no root element") }
        close(frames[0], textRange: 0..<0)
        try budget.charge(out.count, "the JSON")
    }

    // MARK: events

    // Inlined into the sink's overrides, their only callers: one call per event.
    @inline(__always)
    mutating func startElement(_ tag: XMLStartTag) throws(TranscodeError) {
        guard frames.count <= maxDepth else { throw TranscodeError("elements nested deeper than the limit of \(maxDepth) (limits.max_json_depth)") }
        let name = names.id(prefix: strip ? nil : tag.prefix, local: tag.localName, attribute: false)
        let pathLength = hasForced ? path.count : 0
        var isForced = false
        if hasForced {
            path.append(UInt8(ascii: "/"))
            path.append(contentsOf: names.unquoted(name))
            isForced = forced.contains(path)
        }
        beginChild(name, forced: isForced)
        serials &+= 1
        let at = Int32(truncatingIfNeeded: out.count)
        frames.append(Frame(start: at, attributesEnd: at, serial: serials, textStart: Int32(truncatingIfNeeded: text.count),
                            pathLength: Int32(truncatingIfNeeded: pathLength), childStart: Int32(truncatingIfNeeded: children.count)))
        // Attributes update the frame where it is stored: a copy on the stack, written a
        // field at a time and then moved whole, stalled on store forwarding (a quarter of
        // this function's time).
        let frame = frames.base + (frames.count - 1)
        if !strip && tag.nsCount > 0 { writeNamespaceDeclarations(tag, into: frame) }
        if tag.attributeCount > 0 { writeAttributes(tag, into: frame) }
        frame.pointee.attributesEnd = Int32(truncatingIfNeeded: out.count)
        // The output is charged at element ends (a start tag writes no more than its own
        // bytes); names are checked here, where they are added: child records hold 16 bits.
        if names.count > Self.maxNames { try refuse() }
    }

    @inline(__always)
    mutating func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Leading whitespace is trimmed anyway; most of it sits between elements.
        if text.count == Int(frames[frames.count - 1].textStart) && bytes.allSatisfy(Self.isSpace) { return }
        text.append(bytes)
    }

    @inline(__always)
    mutating func endElement() throws(TranscodeError) {
        frames.removeLast(1)
        // The frame is read in place: it stays in the array's storage until the next start.
        let frame = frames.base + frames.count
        let textStart = Int(frame.pointee.textStart)
        // Most elements have no text at all: no trimming then.
        let textRange = text.count == textStart ? textStart..<textStart : trimmed(textStart..<text.count)
        if !frame.pointee.opened {
            if textRange.isEmpty {
                out.append("null")
            } else {
                out.appendQuoted(textBytes(textRange))
            }
        } else {
            let childStart = Int(frame.pointee.childStart)
            if !frame.pointee.needsRegroup && frame.pointee.marksAtRisk && children.count - childStart >= 2 {
                frame.pointee.needsRegroup = hasRepeatedName(from: childStart)
            }
            close(frame.pointee, textRange: textRange)
        }
        // This element's children marked `seenIn`, over its parent's marks.
        if children.count > Int(frame.pointee.childStart) || frame.pointee.marksAtRisk {
            frames[frames.count - 1].marksAtRisk = true
        }
        text.truncate(to: textStart)
        if hasForced { path.removeLast(path.count - Int(frame.pointee.pathLength)) }
        children.truncate(to: Int(frame.pointee.childStart))
        try charge()
    }

    // The helpers below are `mutating` only to take `self` by address: a borrowing call
    // passes this 336-byte struct by value, which the compiler does with a memcpy per call
    // (two per element end, a third of the time on `<a/><b/>…`).
    @inline(__always)
    mutating func charge() throws(TranscodeError) {
        if out.count > outLimit || names.count > Self.maxNames { try refuse() }
    }

    mutating func refuse() throws(TranscodeError) {
        try budget.charge(out.count, "the JSON")
        guard out.count <= Self.maxOffset else { throw budget.exceeded("the JSON") }
        guard names.count <= Self.maxNames else {
            throw TranscodeError("XML document uses more than \(Self.maxNames) distinct element and attribute names")
        }
    }

    // MARK: writing

    /// Writes the separator and key for a child of the innermost open element.
    @inline(__always)
    mutating func beginChild(_ name: Int, forced isForced: Bool) {
        let parent = frames.base + (frames.count - 1)
        let name32 = Int32(truncatingIfNeeded: name)
        if name32 == parent.pointee.lastName {
            // The run's record is the last one (the previous sibling's own children are gone).
            let run = children.base + (children.count - 1)
            if !parent.pointee.runOpen {
                // The previous sibling had the same name: make its value an array (unless
                // regrouping will, which adds the brackets itself).
                if !parent.pointee.needsRegroup {
                    out.insert(UInt8(ascii: "["), at: Int(run.pointee.valueStart))
                    run.pointee.valueStart += 1
                    run.pointee.flags |= Child.bracketFlag
                }
                parent.pointee.runOpen = true
            }
            out.append(UInt8(ascii: ","))
            run.pointee.flags |= Child.severalFlag
            return
        }
        let runWasOpen = parent.pointee.runOpen, opened = parent.pointee.opened
        parent.pointee.members += 1
        parent.pointee.lastName = name32
        parent.pointee.runOpen = isForced
        if parent.pointee.needsRegroup {
            // Regrouping rewrites this element from its children's value ranges alone, so
            // from the first repeat on, no separator, key or bracket is written between them.
            children.append(Child(name: UInt16(truncatingIfNeeded: name), flags: isForced ? Child.forcedFlag : 0,
                                  valueStart: Int32(truncatingIfNeeded: out.count)))
            return
        }
        // `]` `,` or `{`, the key, `:`, `[`: one capacity check, then plain stores.
        let key = names.quoted(name)
        out.reserve(key.count + 4)
        let b = out.base
        var at = out.count
        if runWasOpen {
            b[at] = UInt8(ascii: "]")
            at += 1
        }
        b[at] = opened ? UInt8(ascii: ",") : UInt8(ascii: "{")
        copyBytes(key.baseAddress!, key.count, to: b + at + 1)
        at += 1 + key.count
        b[at] = UInt8(ascii: ":")
        at += 1
        if isForced {
            b[at] = UInt8(ascii: "[")
            at += 1
        }
        out.didWrite(upTo: at)
        if seenIn.count < names.count { growSeen() }
        let seen = seenIn.base + name
        if seen.pointee == parent.pointee.serial { parent.pointee.needsRegroup = true }
        seen.pointee = parent.pointee.serial
        parent.pointee.opened = true
        let flags = isForced ? Child.keyedFlag | Child.forcedFlag | Child.bracketFlag : Child.keyedFlag
        children.append(Child(name: UInt16(truncatingIfNeeded: name), flags: flags, valueStart: Int32(truncatingIfNeeded: at)))
    }

    /// Whether two child records name the same element: the exact check for an element
    /// whose `seenIn` marks a descendant may have overwritten (`<r><a/><c><a/></c><a/></r>`:
    /// `c`'s child re-marked `a`, and `r`'s second `a` looked new). A fresh serial stamps
    /// this check's marks.
    mutating func hasRepeatedName(from first: Int) -> Bool {
        serials &+= 1
        let stamp = serials
        if seenIn.count < names.count { growSeen() }
        for k in first..<children.count {
            let seen = seenIn.base + Int(children[k].name)
            if seen.pointee == stamp { return true }
            seen.pointee = stamp
        }
        return false
    }

    mutating func growSeen() {
        while seenIn.count < names.count { seenIn.append(-1) }
    }

    /// Ends an element written in object form: closes any open run, adds `#text`.
    mutating func close(_ frame: Frame, textRange: Range<Int>) {
        if frame.needsRegroup {
            regroup(frame)
        } else if frame.runOpen {
            out.append(UInt8(ascii: "]"))
        }
        if !textRange.isEmpty {
            out.append(frame.members > 0 ? ",\"#text\":" : "\"#text\":")
            out.appendQuoted(textBytes(textRange))
        }
        out.append(UInt8(ascii: "}"))
    }

    mutating func writeNamespaceDeclarations(_ tag: XMLStartTag, into frame: UnsafeMutablePointer<Frame>) {
        guard let ns = tag.namespaces else { return }
        for k in 0..<tag.nsCount {
            openMember(frame)
            out.append("\"@xmlns")
            if let prefix = ns[2 * k] {
                out.append(UInt8(ascii: ":"))
                out.append(UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            }
            out.append("\":")
            let uri = ns[2 * k + 1]!
            out.appendQuoted(UnsafeBufferPointer(start: uri, count: strlen(uri)))
        }
    }

    mutating func writeAttributes(_ tag: XMLStartTag, into frame: UnsafeMutablePointer<Frame>) {
        guard let attrs = tag.attributes else { return }
        for k in 0..<tag.attributeCount {
            let base = 5 * k
            let id = names.id(prefix: strip ? nil : attrs[base + 1], local: attrs[base]!, attribute: true)
            let key = names.quoted(id)
            let start = attrs[base + 3]!, end = attrs[base + 4]!
            let value = UnsafeBufferPointer(start: start, count: end - start)
            guard value.count <= 256 else {
                openMember(frame)
                out.append(key)
                out.append(UInt8(ascii: ":"))
                out.appendQuoted(value)
                continue
            }
            // `{` or `,`, the key, `:` and the value escaped (at worst 6 bytes a byte):
            // one capacity check, then plain stores.
            out.reserve(key.count + 6 * value.count + 4)
            let b = out.base
            var at = out.count
            b[at] = frame.pointee.opened ? UInt8(ascii: ",") : UInt8(ascii: "{")
            copyBytes(key.baseAddress!, key.count, to: b + at + 1)
            at += 1 + key.count
            b[at] = UInt8(ascii: ":")
            at += 1
            at += JSONEscaping.writeQuoted(value, to: b + at)
            out.didWrite(upTo: at)
            frame.pointee.opened = true
            frame.pointee.members += 1
        }
    }

    mutating func openMember(_ frame: UnsafeMutablePointer<Frame>) {
        if !frame.pointee.opened {
            out.append(UInt8(ascii: "{"))
            frame.pointee.opened = true
        } else {
            out.append(UInt8(ascii: ","))
        }
        frame.pointee.members += 1
    }

    mutating func textBytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.base + range.lowerBound, count: range.count)
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    mutating func trimmed(_ range: Range<Int>) -> Range<Int> {
        var low = range.lowerBound, high = range.upperBound
        while low < high && Self.isSpace(text[low]) { low += 1 }
        while high > low && Self.isSpace(text[high - 1]) { high -= 1 }
        return low..<high
    }
}
