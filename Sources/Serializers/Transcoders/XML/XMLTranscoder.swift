internal import CLibxml2

/// XML → JSON in xmltodict's convention (DESIGN §5): element → key, attributes
/// `@name` first, text `#text` last (text alone → a plain string), repeated siblings
/// → array at the first one's position, `force_array` paths always arrays, empty
/// element → null, all leaves strings, CDATA is text, whitespace around text trimmed.
public enum XMLTranscoder {
    public static func transcode(_ body: [UInt8], options: XMLOptions = XMLOptions(),
                                 maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                                 budget: OutputBudget? = nil) throws(TranscodeError) -> NormalizedJSON {
        try transcode(body, options: options, maxDepth: maxDepth, budget: budget, fastPath: true)
    }

    /// `fastPath: false` parses with libxml2 alone (tests and benchmarks compare the two).
    static func transcode(_ body: [UInt8], options: XMLOptions = XMLOptions(), maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                          budget: OutputBudget? = nil, fastPath: Bool) throws(TranscodeError) -> NormalizedJSON {
        let bytes = try XMLSAXParser.utf8(body)
        // The JSON is written straight into the array returned, given the input's size (XML
        // is the wordier form; never empty); only output that outgrows it is copied once more.
        var failure: TranscodeError?
        var builder: XMLJSONBuilder?
        var json = [UInt8](unsafeUninitializedCapacity: max(body.count, 64)) { memory, initialized in
            let budget = budget ?? OutputBudget(input: body.count)
            var sink = XMLJSONBuilder(options: options, output: memory, maxDepth: maxDepth, budget: budget)
            do throws(TranscodeError) {
                var scanned = false
                if fastPath { scanned = try scan(bytes, into: sink) }
                if !scanned {
                    // libxml2 parses from the start, into a builder that has seen nothing.
                    sink = XMLJSONBuilder(options: options, output: memory, maxDepth: maxDepth, budget: budget)
                    try XMLSAXParser.parse(utf8: bytes, sink: sink)
                }
                builder = sink
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

    /// The fast path (XMLFastScanner): false when it leaves the body to libxml2.
    static func scan(_ bytes: [UInt8], into sink: XMLJSONBuilder) throws(TranscodeError) -> Bool {
        guard !bytes.isEmpty else { return false }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(TranscodeError) -> Bool in
            var scanner = XMLFastScanner(buffer)
            do throws(XMLFastStop) {
                try scanner.run(into: &sink.core)
                return true
            } catch {
                switch error {
                case .unsupported: return false
                case .failed(let failure): throw failure
                }
            }
        }
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
        if text.count == Int(frames[frames.count - 1].textStart) && bytes.allSatisfy(XMLBytes.isSpace) { return }
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
}
