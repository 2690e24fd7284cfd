/// Normalized JSON indexed for walking without building a tree: one entry per value and
/// per member key, in document order — where it starts in `bytes` and the entry just
/// past it (its subtree skipped). 8 bytes an entry, on `FlatArray`; a `JSONValue` tree of
/// the same document costs 24–40 bytes a value plus its arrays' growth.
struct JSONTape: ~Copyable {
    let bytes: [UInt8]
    var start = FlatArray<Int32>()
    var end = FlatArray<Int32>()

    /// `bytes` must be the normalizer's output (no whitespace, valid grammar).
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
                open.append(Int32(start.count))
                add(i)
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                let entry = Int(open[open.count - 1])
                open.removeLast(1)
                end[entry] = Int32(start.count)
                i += 1
            case UInt8(ascii: "\""):
                add(i)
                i += 1
                while bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
            default:
                add(i)
                while i < n, ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(bytes[i]) { i += 1 }
            }
        }
    }

    private mutating func add(_ at: Int) {
        start.append(Int32(at))
        end.append(Int32(start.count))
    }

    var count: Int { start.count }

    func first(_ entry: Int) -> UInt8 { bytes[Int(start[entry])] }

    /// A string entry's text, escapes decoded.
    func string(_ entry: Int) -> String {
        var reader = NormalizedReader(bytes: bytes, i: Int(start[entry]))
        return reader.string()
    }

    /// A number's lexeme, or a literal's text.
    func scalar(_ entry: Int) -> String {
        let from = Int(start[entry])
        var to = from
        while to < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(bytes[to]) { to += 1 }
        return String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// An object's members as (key entry, value entry).
    func members(_ object: Int) -> [(key: Int, value: Int)] {
        var out: [(key: Int, value: Int)] = []
        var k = object + 1
        while k < Int(end[object]) {
            out.append((k, k + 1))
            k = Int(end[k + 1])
        }
        return out
    }

    /// An array's items, in order, calling `body` for each entry.
    func forEachItem(_ array: Int, _ body: (Int) throws(TranscodeError) -> Void) throws(TranscodeError) {
        var k = array + 1
        while k < Int(end[array]) {
            try body(k)
            k = Int(end[k])
        }
    }
}
