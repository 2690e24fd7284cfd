/// XML → JSON in xmltodict's convention (DESIGN §5): element → key, attributes
/// `@name` first, text `#text` last (text alone → a plain string), repeated siblings
/// → array at the first one's position, `force_array` paths always arrays, empty
/// element → null, all leaves strings, CDATA is text, whitespace around text trimmed.
///
/// It writes JSON bytes as elements close: each closed element's value sits in
/// `values` until its parent closes and groups it with its siblings, so memory stays
/// near the output size and no tree of Swift objects is built.
public enum XMLTranscoder {
    public static func transcode(_ body: [UInt8], options: XMLOptions = XMLOptions(),
                                 maxDepth: Int = JSONReadOptions.defaultMaxDepth) throws(TranscodeError) -> NormalizedJSON {
        let builder = XMLJSONBuilder(options: options, capacity: body.count, maxDepth: maxDepth)
        try XMLSAXParser.parse(body, sink: builder)
        return NormalizedJSON(trusted: try builder.finish())
    }
}

final class XMLJSONBuilder: XMLEventSink {
    struct Frame {
        var valueStart: Int      // where this element's attribute and child bytes begin in `values`
        var attributesEnd: Int   // end of the `"@a":"v",…` run
        var childStart: Int      // first index into `children`
        var textStart: Int       // start of this element's text in `text`
        var name: Int
        var pathLength: Int
    }
    struct Child {
        var name: Int
        var start: Int
        var end: Int
        var forced: Bool
    }
    struct NameKey: Hashable {
        let prefix: UInt
        let local: UInt
        let attribute: Bool
    }

    let strip: Bool
    let forced: Set<[UInt8]>
    let maxDepth: Int
    var values: [UInt8] = []
    var text: [UInt8] = []
    var frames: [Frame] = []
    var children: [Child] = []
    var path: [UInt8] = []
    /// Quoted JSON keys by name id, and the cache from libxml2's interned pointers.
    var keys: [[UInt8]] = []
    var keyIDs: [NameKey: Int] = [:]
    var assembly: [UInt8] = []
    // Grouping scratch, reused across elements: head/tail/next linked lists by group.
    var groupOfName: [Int] = []
    var groupNames: [Int] = []
    var groupHead: [Int] = []
    var groupTail: [Int] = []
    var groupForced: [Bool] = []
    var groupCount: [Int] = []
    var next: [Int] = []

    init(options: XMLOptions, capacity: Int, maxDepth: Int) {
        self.maxDepth = maxDepth
        strip = options.namespaces == .strip
        forced = Set(options.forceArray.map { Array($0.utf8) })
        values.reserveCapacity(capacity)
        frames.append(Frame(valueStart: 0, attributesEnd: 0, childStart: 0, textStart: 0, name: -1, pathLength: 0))
    }

    func finish() throws(TranscodeError) -> [UInt8] {
        guard frames.count == 1, !children.isEmpty else { throw TranscodeError("XML document has no root element") }
        assemble(frames[0], hasText: false, textRange: 0..<0)
        return values
    }

    // MARK: events

    func startElement(_ tag: XMLStartTag) throws(TranscodeError) {
        guard frames.count <= maxDepth else { throw TranscodeError("elements nested deeper than the limit of \(maxDepth)") }
        let name = keyID(prefix: tag.prefix, local: tag.localName, attribute: false)
        let pathLength = path.count
        if !forced.isEmpty {
            path.append(UInt8(ascii: "/"))
            let key = keys[name]
            path.append(contentsOf: key[1..<(key.count - 1)])
        }
        let start = values.count
        if !strip { writeNamespaceDeclarations(tag) }
        writeAttributes(tag)
        frames.append(Frame(valueStart: start, attributesEnd: values.count, childStart: children.count,
                            textStart: text.count, name: name, pathLength: pathLength))
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        text.append(contentsOf: bytes)
    }

    func endElement() throws(TranscodeError) {
        let frame = frames.removeLast()
        let textRange = trimmed(frame.textStart..<text.count)
        let isForced = !forced.isEmpty && forced.contains(path)
        if !forced.isEmpty { path.removeSubrange(frame.pathLength...) }
        if frame.attributesEnd == frame.valueStart && children.count == frame.childStart {
            if textRange.isEmpty {
                values.append(contentsOf: "null".utf8)
            } else {
                text.withUnsafeBufferPointer { JSONEscaping.appendQuoted(UnsafeBufferPointer(rebasing: $0[textRange]), to: &values) }
            }
        } else {
            assemble(frame, hasText: !textRange.isEmpty, textRange: textRange)
        }
        text.removeSubrange(frame.textStart...)
        children.append(Child(name: frame.name, start: frame.valueStart, end: values.count, forced: isForced))
    }

    // MARK: writing

    func writeNamespaceDeclarations(_ tag: XMLStartTag) {
        guard let ns = tag.namespaces else { return }
        for k in 0..<tag.nsCount {
            values.append(contentsOf: "\"@xmlns".utf8)
            if let prefix = ns[2 * k] {
                values.append(UInt8(ascii: ":"))
                values.append(contentsOf: UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            }
            values.append(contentsOf: "\":".utf8)
            let uri = ns[2 * k + 1]!
            JSONEscaping.appendQuoted(UnsafeBufferPointer(start: uri, count: strlen(uri)), to: &values)
            values.append(UInt8(ascii: ","))
        }
    }

    func writeAttributes(_ tag: XMLStartTag) {
        guard let attrs = tag.attributes else { return }
        for k in 0..<tag.attributeCount {
            let base = 5 * k
            let id = keyID(prefix: attrs[base + 1], local: attrs[base]!, attribute: true)
            values.append(contentsOf: keys[id])
            values.append(UInt8(ascii: ":"))
            let start = attrs[base + 3]!, end = attrs[base + 4]!
            JSONEscaping.appendQuoted(UnsafeBufferPointer(start: start, count: end - start), to: &values)
            values.append(UInt8(ascii: ","))
        }
    }

    /// Replaces the element's attribute and child bytes with its object value.
    func assemble(_ frame: Frame, hasText: Bool, textRange: Range<Int>) {
        assembly.removeAll(keepingCapacity: true)
        assembly.append(UInt8(ascii: "{"))
        assembly.append(contentsOf: values[frame.valueStart..<frame.attributesEnd])
        groupChildren(from: frame.childStart)
        values.withUnsafeBufferPointer { v in
            for g in 0..<groupNames.count {
                assembly.append(contentsOf: keys[groupNames[g]])
                assembly.append(UInt8(ascii: ":"))
                let asArray = groupCount[g] > 1 || groupForced[g]
                if asArray { assembly.append(UInt8(ascii: "[")) }
                var j = groupHead[g], first = true
                while j >= 0 {
                    if !first { assembly.append(UInt8(ascii: ",")) }
                    let child = children[frame.childStart + j]
                    assembly.append(contentsOf: UnsafeBufferPointer(rebasing: v[child.start..<child.end]))
                    first = false
                    j = next[j]
                }
                if asArray { assembly.append(UInt8(ascii: "]")) }
                assembly.append(UInt8(ascii: ","))
            }
        }
        if hasText {
            assembly.append(contentsOf: "\"#text\":".utf8)
            text.withUnsafeBufferPointer { JSONEscaping.appendQuoted(UnsafeBufferPointer(rebasing: $0[textRange]), to: &assembly) }
            assembly.append(UInt8(ascii: ","))
        }
        if assembly.last == UInt8(ascii: ",") { assembly.removeLast() }
        assembly.append(UInt8(ascii: "}"))
        values.removeSubrange(frame.valueStart...)
        values.append(contentsOf: assembly)
        children.removeSubrange(frame.childStart...)
    }

    /// Groups `children[from...]` by name, in order of first appearance.
    func groupChildren(from start: Int) {
        if groupOfName.count < keys.count { groupOfName.append(contentsOf: repeatElement(-1, count: keys.count - groupOfName.count)) }
        groupNames.removeAll(keepingCapacity: true)
        groupHead.removeAll(keepingCapacity: true)
        groupTail.removeAll(keepingCapacity: true)
        groupForced.removeAll(keepingCapacity: true)
        groupCount.removeAll(keepingCapacity: true)
        next.removeAll(keepingCapacity: true)
        for j in 0..<(children.count - start) {
            let child = children[start + j]
            next.append(-1)
            let g = groupOfName[child.name]
            if g < 0 {
                groupOfName[child.name] = groupNames.count
                groupNames.append(child.name)
                groupHead.append(j); groupTail.append(j)
                groupForced.append(child.forced); groupCount.append(1)
            } else {
                next[groupTail[g]] = j
                groupTail[g] = j
                groupCount[g] += 1
                groupForced[g] = groupForced[g] || child.forced
            }
        }
        for name in groupNames { groupOfName[name] = -1 }
    }

    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var low = range.lowerBound, high = range.upperBound
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        while low < high && isSpace(text[low]) { low += 1 }
        while high > low && isSpace(text[high - 1]) { high -= 1 }
        return low..<high
    }

    /// The id of an element or attribute name's quoted JSON key, computed once per name.
    func keyID(prefix: UnsafePointer<UInt8>?, local: UnsafePointer<UInt8>, attribute: Bool) -> Int {
        let cacheKey = NameKey(prefix: UInt(bitPattern: prefix), local: UInt(bitPattern: local), attribute: attribute)
        if let id = keyIDs[cacheKey] { return id }
        var name: [UInt8] = attribute ? [UInt8(ascii: "@")] : []
        if let prefix, !strip {
            name.append(contentsOf: UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            name.append(UInt8(ascii: ":"))
        }
        name.append(contentsOf: UnsafeBufferPointer(start: local, count: strlen(local)))
        var quoted: [UInt8] = []
        JSONEscaping.appendQuoted(name, to: &quoted)
        keys.append(quoted)
        keyIDs[cacheKey] = keys.count - 1
        return keys.count - 1
    }
}

@inline(__always)
func strlen(_ p: UnsafePointer<UInt8>) -> Int {
    var n = 0
    while p[n] != 0 { n += 1 }
    return n
}
