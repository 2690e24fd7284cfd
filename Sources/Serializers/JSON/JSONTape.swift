/// Normalized JSON indexed for walking without building a tree, in document order: one
/// slot per scalar and per member key — where it starts in `bytes` — and two per object
/// or array: where it starts (high bit set) and the slot just past its subtree. 4 bytes a
/// value on `FlatArray`; a `JSONValue` tree of the same document costs 24–40 bytes a
/// value plus its arrays' growth.
struct JSONTape: ~Copyable {
    let bytes: [UInt8]
    var slots = FlatArray<Int32>()
    static let containerBit = Int32.min

    /// `bytes` must be the normalizer's output (no whitespace, valid grammar, under 2 GiB).
    init(normalized bytes: [UInt8]) {
        self.bytes = bytes
        var open = FlatArray<Int32>()
        var i = 0
        let n = bytes.count
        while i < n {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                i += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                open.append(Int32(slots.count))
                slots.append(Int32(i) | Self.containerBit)
                slots.append(0)
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                slots[Int(open[open.count - 1]) + 1] = Int32(slots.count)
                open.removeLast(1)
                i += 1
            case UInt8(ascii: "\""):
                slots.append(Int32(i))
                i += 1
                while bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
            default:
                slots.append(Int32(i))
                while i < n, !Self.endsScalar(bytes[i]) { i += 1 }
            }
        }
    }

    static func endsScalar(_ c: UInt8) -> Bool {
        c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c == UInt8(ascii: "}")
    }

    func isContainer(_ entry: Int) -> Bool { slots[entry] < 0 }
    func offset(_ entry: Int) -> Int { Int(slots[entry] & Int32.max) }
    func first(_ entry: Int) -> UInt8 { bytes[offset(entry)] }
    /// A container's first child (or `end` when it is empty).
    func firstChild(_ container: Int) -> Int { container + 2 }
    /// The slot just past a container's subtree.
    func end(_ container: Int) -> Int { Int(slots[container + 1]) }
    /// The slot just past this entry's subtree: its next sibling, if it has one.
    func next(_ entry: Int) -> Int { isContainer(entry) ? end(entry) : entry + 1 }

    /// A string entry's text, escapes decoded.
    func string(_ entry: Int) -> String {
        var reader = NormalizedReader(bytes: bytes, i: offset(entry))
        return reader.string()
    }

    /// A number's lexeme, or a literal's text.
    func scalar(_ entry: Int) -> String {
        let from = offset(entry)
        var to = from
        while to < bytes.count, !Self.endsScalar(bytes[to]) { to += 1 }
        return String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// An object's members as (key entry, value entry).
    func members(_ object: Int) -> [(key: Int, value: Int)] {
        var out: [(key: Int, value: Int)] = []
        var k = firstChild(object)
        while k < end(object) {
            out.append((k, k + 1))
            k = next(k + 1)
        }
        return out
    }
}
