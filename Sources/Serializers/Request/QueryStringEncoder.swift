import HTTPCore

/// AF's `AFQueryStringFromParameters`: nested objects `a[b]=`, arrays `a[]=`, keys
/// sorted by UTF-16 code unit at every level, null → bare key, empty containers
/// vanish, booleans `1`/`0`, numbers as their JSON text, and AF's escape set.
public enum QueryStringEncoder {
    /// Unbounded, for callers that encode their own values.
    public static func encode(_ parameters: [(String, JSONValue)]) -> String {
        let tape = JSONTape(normalized: NormalizedJSON(.object(parameters)).bytes)
        return (try? encode(tape, budget: OutputBudget(input: .max, cap: .max))) ?? ""
    }

    /// Encodes the object at the tape's first entry, charging `budget` after every pair.
    /// The field name is built once, in a buffer of escaped bytes that grows and shrinks
    /// with the nesting, so an empty container costs O(1) however deep it sits.
    static func encode(_ tape: borrowing JSONTape, budget: OutputBudget) throws(TranscodeError) -> String {
        var writer = Writer(budget: budget)
        writer.reserveForBudget()
        for (key, value) in JSONWriter.lastWinsSortedByUTF16(tape.members(0).map { (tape.string($0.key), $0.value) }) {
            writer.field.removeAll(keepingCapacity: true)
            escape(key.utf8, into: &writer.field)
            try writer.append(value, of: tape)
        }
        return String(decoding: writer.out, as: UTF8.self)
    }

    struct Writer {
        let budget: OutputBudget
        var out: [UInt8] = []
        var field: [UInt8] = []

        mutating func append(_ entry: Int, of tape: borrowing JSONTape) throws(TranscodeError) {
            let mark = field.count
            defer { field.removeLast(field.count - mark) }
            switch tape.first(entry) {
            case UInt8(ascii: "{"):
                for (key, nested) in JSONWriter.lastWinsSortedByUTF16(tape.members(entry).map { (tape.string($0.key), $0.value) }) {
                    field.removeLast(field.count - mark)
                    field.append(contentsOf: "%5B".utf8)
                    escape(key.utf8, into: &field)
                    field.append(contentsOf: "%5D".utf8)
                    try append(nested, of: tape)
                }
            case UInt8(ascii: "["):
                field.append(contentsOf: "%5B%5D".utf8)
                var k = tape.firstChild(entry)
                while k < tape.end(entry) {
                    try append(k, of: tape)
                    k = tape.next(k)
                }
            case UInt8(ascii: "n"): try pair(nil)
            case UInt8(ascii: "t"): try pair("1")
            case UInt8(ascii: "f"): try pair("0")
            case UInt8(ascii: "\""): try pair(tape.string(entry))
            default: try pair(tape.scalar(entry))
            }
        }

        /// The whole budget up front: its pages are touched only as they are written, and
        /// growing by doubling would hold two copies of the output at once.
        mutating func reserveForBudget() {
            if budget.limit <= OutputBudget.reserveUpTo { out.reserveCapacity(budget.limit) }
        }

        mutating func pair(_ value: String?) throws(TranscodeError) {
            if !out.isEmpty { out.append(UInt8(ascii: "&")) }
            out.append(contentsOf: field)
            if let value {
                out.append(UInt8(ascii: "="))
                escape(value.utf8, into: &out)
            }
            try budget.charge(out.count, "the query string")
        }
    }

    /// AF's `AFPercentEscapedStringFromString`: RFC 3986 query characters minus the
    /// general and sub-delimiters, keeping `?` and `/`; UTF-8 bytes as `%XX`.
    public static func percentEscaped(_ string: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        escape(string.utf8, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func escape(_ bytes: String.UTF8View, into out: inout [UInt8]) {
        Percent.encode(bytes, keeping: isUnescaped, into: &out)
    }

    static func isUnescaped(_ c: UInt8) -> Bool {
        Percent.isUnreserved(c) || c == UInt8(ascii: "/") || c == UInt8(ascii: "?")
    }
}
