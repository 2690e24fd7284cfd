// XML → JSON as it was before runs and counting-sort regrouping: the differential oracle
// for fuzz/xml. Kept only here.
/// XML → JSON in xmltodict's convention (DESIGN §5): element → key, attributes
/// `@name` first, text `#text` last (text alone → a plain string), repeated siblings
/// → array at the first one's position, `force_array` paths always arrays, empty
/// element → null, all leaves strings, CDATA is text, whitespace around text trimmed.
@testable import Serializers
enum ReferenceXMLTranscoder {
    static func transcode(_ body: [UInt8], options: XMLOptions = XMLOptions(),
                                 maxDepth: Int = JSONReadOptions.defaultMaxDepth) throws(TranscodeError) -> NormalizedJSON {
        let builder = ReferenceXMLJSONBuilder(options: options, capacity: body.count, maxDepth: maxDepth)
        try XMLSAXParser.parse(body, sink: builder)
        return NormalizedJSON(trusted: try builder.finish())
    }
}

/// The SAX sink. All state lives in one struct, and the class skips dynamic
/// exclusivity checks (they cost ~40% of the time when every property had one).
final class ReferenceXMLJSONBuilder: XMLEventSink {
    // Only libxml2's callbacks on one thread touch it, one at a time.
    @exclusivity(unchecked) var core: ReferenceXMLJSONCore

    init(options: XMLOptions, capacity: Int, maxDepth: Int) {
        core = ReferenceXMLJSONCore(options: options, capacity: capacity, maxDepth: maxDepth)
    }

    override func startElement(_ tag: XMLStartTag) throws(TranscodeError) { try core.startElement(tag) }
    override func endElement() throws(TranscodeError) { core.endElement() }
    override func characters(_ bytes: UnsafeBufferPointer<UInt8>) { core.characters(bytes) }
    func finish() throws(TranscodeError) -> [UInt8] { try core.finish() }
}

/// Writes the JSON as the document streams by. A child's key is written when it
/// starts; a run of same-named siblings becomes an array in place (the first value is
/// shifted by one byte for the `[`). Only a name that repeats after a different one
/// (`<a/><b/><a/>`) needs regrouping, and only that element's bytes are rewritten.
struct ReferenceXMLJSONCore: ~Copyable {
    struct Frame {
        var start: Int          // where this element's value begins in `out`
        var attributesEnd: Int  // end of `{"@a":"v"` when attributes were written
        var name: Int
        var textStart: Int
        var pathLength: Int
        var childStart: Int     // first record in `children`
        var opened = false      // `{` written
        var members = 0
        var lastName = -1
        var runOpen = false     // the last child group is an array still open
        var needsRegroup = false
        /// Names among this element's children so far: plainly per element, so a name a
        /// descendant uses cannot hide a repeat here (the product's one-table version once did).
        var seen: Set<Int> = []
    }
    struct Child {
        var name: Int
        var valueStart: Int
        var valueEnd: Int
        var forced: Bool
    }

    let strip: Bool
    let forced: Set<[UInt8]>
    let maxDepth: Int
    var out: ByteBuffer
    var text = ByteBuffer(capacity: 4096)
    var frames: [Frame] = []
    var children: [Child] = []
    var path: [UInt8] = []
    // The product's name table: names are not what this oracle checks.
    var names = NameTable()

    init(options: XMLOptions, capacity: Int, maxDepth: Int) {
        self.maxDepth = maxDepth
        strip = options.namespaces == .strip
        forced = Set(options.forceArray.map { Array($0.utf8) })
        out = ByteBuffer(capacity: capacity)
        frames.append(Frame(start: 0, attributesEnd: 0, name: -1, textStart: 0, pathLength: 0, childStart: 0))
    }

    mutating func finish() throws(TranscodeError) -> [UInt8] {
        guard frames.count == 1, frames[0].members > 0 else { throw TranscodeError("XML document has no root element") }
        var document = frames[0]
        close(&document, textRange: 0..<0)
        return out.array
    }

    // MARK: events

    mutating func startElement(_ tag: XMLStartTag) throws(TranscodeError) {
        guard frames.count <= maxDepth else { throw TranscodeError("elements nested deeper than the limit of \(maxDepth) (limits.max_json_depth)") }
        let name = names.id(prefix: strip ? nil : tag.prefix, local: tag.localName, attribute: false)
        let pathLength = path.count
        var isForced = false
        if !forced.isEmpty {
            path.append(UInt8(ascii: "/"))
            path.append(contentsOf: names.unquoted(name))
            isForced = forced.contains(path)
        }
        beginChild(name, forced: isForced)
        var frame = Frame(start: out.count, attributesEnd: out.count, name: name,
                          textStart: text.count, pathLength: pathLength, childStart: children.count)
        if !strip { writeNamespaceDeclarations(tag, into: &frame) }
        writeAttributes(tag, into: &frame)
        frame.attributesEnd = out.count
        frames.append(frame)
    }

    mutating func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Leading whitespace is trimmed anyway; most of it sits between elements.
        if text.count == frames[frames.count - 1].textStart && bytes.allSatisfy(Self.isSpace) { return }
        text.append(bytes)
    }

    mutating func endElement() {
        var frame = frames.removeLast()
        let textRange = trimmed(frame.textStart..<text.count)
        if !frame.opened {
            if textRange.isEmpty {
                out.append("null")
            } else {
                out.appendQuoted(textBytes(textRange))
            }
        } else {
            close(&frame, textRange: textRange)
        }
        text.removeLast(text.count - frame.textStart)
        if !forced.isEmpty { path.removeLast(path.count - frame.pathLength) }
        children[frame.childStart - 1].valueEnd = out.count
        children.removeLast(children.count - frame.childStart)
    }

    // MARK: writing

    /// Writes the separator and key for a child of the innermost open element.
    mutating func beginChild(_ name: Int, forced isForced: Bool) {
        let p = frames.count - 1
        if !frames[p].opened {
            out.append(UInt8(ascii: "{"))
            frames[p].opened = true
        }
        if name == frames[p].lastName {
            if !frames[p].runOpen {
                // The previous sibling had the same name: make its value an array.
                let at = children[children.count - 1].valueStart
                out.insert(UInt8(ascii: "["), at: at)
                children[children.count - 1].valueStart += 1
                children[children.count - 1].valueEnd += 1
                frames[p].runOpen = true
            }
            out.append(UInt8(ascii: ","))
        } else {
            if frames[p].runOpen { out.append(UInt8(ascii: "]")) }
            if !frames[p].seen.insert(name).inserted { frames[p].needsRegroup = true }
            if frames[p].members > 0 { out.append(UInt8(ascii: ",")) }
            out.append(names.quoted(name))
            out.append(UInt8(ascii: ":"))
            if isForced { out.append(UInt8(ascii: "[")) }
            frames[p].runOpen = isForced
            frames[p].members += 1
            frames[p].lastName = name
        }
        children.append(Child(name: name, valueStart: out.count, valueEnd: out.count, forced: isForced))
    }

    /// Ends an element written in object form: closes any open run, adds `#text`.
    mutating func close(_ frame: inout Frame, textRange: Range<Int>) {
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

    mutating func writeNamespaceDeclarations(_ tag: XMLStartTag, into frame: inout Frame) {
        guard let ns = tag.namespaces else { return }
        for k in 0..<tag.nsCount {
            openMember(&frame)
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

    mutating func writeAttributes(_ tag: XMLStartTag, into frame: inout Frame) {
        guard let attrs = tag.attributes else { return }
        for k in 0..<tag.attributeCount {
            let base = 5 * k
            openMember(&frame)
            let id = names.id(prefix: strip ? nil : attrs[base + 1], local: attrs[base]!, attribute: true)
            out.append(names.quoted(id))
            out.append(UInt8(ascii: ":"))
            let start = attrs[base + 3]!, end = attrs[base + 4]!
            out.appendQuoted(UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    mutating func openMember(_ frame: inout Frame) {
        if !frame.opened {
            out.append(UInt8(ascii: "{"))
            frame.opened = true
        } else {
            out.append(UInt8(ascii: ","))
        }
        frame.members += 1
    }

    /// Rewrites this element's members grouped by name in order of first appearance.
    mutating func regroup(_ frame: Frame) {
        let kids = Array(children[frame.childStart...])
        var order: [Int] = []
        var groups: [Int: [Int]] = [:]
        for (k, child) in kids.enumerated() {
            if groups[child.name] == nil { order.append(child.name) }
            groups[child.name, default: []].append(k)
        }
        // Rebuilt at the end of the buffer, then moved down over the original.
        let rebuiltStart = out.count
        out.appendCopy(of: frame.start..<frame.attributesEnd)
        for name in order {
            let members = groups[name]!
            out.append(out.count == rebuiltStart ? UInt8(ascii: "{") : UInt8(ascii: ","))
            out.append(names.quoted(name))
            out.append(UInt8(ascii: ":"))
            let asArray = members.count > 1 || kids[members[0]].forced
            if asArray { out.append(UInt8(ascii: "[")) }
            for (k, index) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                out.appendCopy(of: kids[index].valueStart..<kids[index].valueEnd)
            }
            if asArray { out.append(UInt8(ascii: "]")) }
        }
        let length = out.count - rebuiltStart
        (out.base + frame.start).update(from: out.base + rebuiltStart, count: length)
        out.removeLast(out.count - frame.start - length)
    }

    func textBytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.base + range.lowerBound, count: range.count)
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var low = range.lowerBound, high = range.upperBound
        while low < high && Self.isSpace(text[low]) { low += 1 }
        while high > low && Self.isSpace(text[high - 1]) { high -= 1 }
        return low..<high
    }
}
