/// A parsed `Content-Type` value: `type/subtype; name=value`.
///
/// Type, subtype and parameter names are lowercased (RFC 9110 makes them
/// case-insensitive); parameter values keep their case, minus quotes.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    public let type: String
    public let subtype: String
    public let parameters: [String: String]

    /// Names already lowercased by `parse`.
    private init(type: String, subtype: String, parameters: [String: String]) {
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }

    /// Parses a header value; nil when it has no `type/subtype` shape. Works on UTF-8
    /// bytes: it runs for every upstream response.
    public init?(_ header: String) {
        var text = header
        guard let parsed = text.withUTF8({ MediaType.parse($0) }) else { return nil }
        self.init(type: parsed.0, subtype: parsed.1, parameters: parsed.2)
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> (String, String, [String: String])? {
        var i = 0
        let n = b.count
        func skipSpace() { while i < n && (b[i] == 0x20 || b[i] == 0x09) { i += 1 } }
        func token() -> String? {
            let start = i
            while i < n && isToken(b[i]) { i += 1 }
            guard i > start else { return nil }
            return lowercased(UnsafeBufferPointer(rebasing: b[start..<i]))
        }
        skipSpace()
        guard let type = token(), i < n, b[i] == UInt8(ascii: "/") else { return nil }
        i += 1
        guard let subtype = token() else { return nil }
        skipSpace()
        var parameters: [String: String] = [:]
        while i < n {
            guard b[i] == UInt8(ascii: ";") else { return nil }
            i += 1
            skipSpace()
            guard let name = token() else {
                if i >= n { break }
                return nil
            }
            skipSpace()
            guard i < n, b[i] == UInt8(ascii: "=") else { parameters[name] = ""; skipSpace(); continue }
            i += 1
            skipSpace()
            var value: String
            if i < n && b[i] == UInt8(ascii: "\"") {
                let start = i + 1
                i = start
                while i < n && b[i] != UInt8(ascii: "\"") { i += 1 }
                value = String(decoding: UnsafeBufferPointer(rebasing: b[start..<min(i, n)]), as: UTF8.self)
                if i < n { i += 1 }
            } else {
                let start = i
                while i < n && b[i] != UInt8(ascii: ";") && b[i] != 0x20 && b[i] != 0x09 { i += 1 }
                value = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
            }
            parameters[name] = value
            skipSpace()
        }
        return (type, subtype, parameters)
    }

    static func isToken(_ c: UInt8) -> Bool {
        guard c > 0x20, c < 0x7F else { return false }
        switch c {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"),
             UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\\"), UInt8(ascii: "\""),
             UInt8(ascii: "/"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "="),
             UInt8(ascii: "{"), UInt8(ascii: "}"):
            return false
        default:
            return true
        }
    }

    static func lowercased(_ b: UnsafeBufferPointer<UInt8>) -> String {
        if !b.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { return String(decoding: b, as: UTF8.self) }
        return String(decoding: b.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// `type/subtype`, lowercased, without parameters: what AF calls the MIME type.
    public var essence: String { "\(type)/\(subtype)" }

    /// The `charset` parameter, lowercased, if any.
    public var charset: String? { parameters["charset"]?.lowercased() }

    /// The structured-syntax suffix (`json` for `application/vnd.api+json`).
    public var suffix: String? {
        guard let plus = subtype.lastIndex(of: "+") else { return nil }
        return String(subtype[subtype.index(after: plus)...])
    }

    public var description: String { essence }

}

extension StringProtocol {
    /// Trims spaces and tabs (HTTP's OWS), not Unicode whitespace.
    public func trimmingASCIIWhitespace() -> String {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isOWS($0) }) else { return "" }
        let last = lastIndex(where: { !isOWS($0) })!
        return String(self[first...last])
    }
}
