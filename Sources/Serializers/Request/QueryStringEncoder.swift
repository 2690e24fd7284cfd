/// AF's `AFQueryStringFromParameters`: nested objects `a[b]=`, arrays `a[]=`, keys
/// sorted by UTF-16 code unit at every level, null → bare key, empty containers
/// vanish, booleans `1`/`0`, numbers as their JSON text, and AF's escape set.
public enum QueryStringEncoder {
    public static func encode(_ parameters: [(String, JSONValue)]) -> String {
        var pairs: [String] = []
        for (key, value) in JSONWriter.lastWinsSortedByUTF16(parameters) {
            append(field: key, value: value, to: &pairs)
        }
        return pairs.joined(separator: "&")
    }

    static func append(field: String, value: JSONValue, to pairs: inout [String]) {
        switch value {
        case .object(let members):
            for (key, nested) in JSONWriter.lastWinsSortedByUTF16(members) {
                append(field: "\(field)[\(key)]", value: nested, to: &pairs)
            }
        case .array(let items):
            for item in items { append(field: "\(field)[]", value: item, to: &pairs) }
        case .null:
            pairs.append(percentEscaped(field))
        case .bool(let b):
            pairs.append(percentEscaped(field) + "=" + (b ? "1" : "0"))
        case .number(let lexeme):
            pairs.append(percentEscaped(field) + "=" + percentEscaped(lexeme))
        case .string(let s):
            pairs.append(percentEscaped(field) + "=" + percentEscaped(s))
        }
    }

    static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// AF's `AFPercentEscapedStringFromString`: RFC 3986 query characters minus the
    /// general and sub-delimiters, keeping `?` and `/`; UTF-8 bytes as `%XX`.
    public static func percentEscaped(_ string: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnescaped(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnescaped(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
