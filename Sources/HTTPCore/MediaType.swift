/// A parsed `Content-Type` value: `type/subtype; name=value`.
///
/// Type, subtype and parameter names are lowercased (RFC 9110 makes them
/// case-insensitive); parameter values keep their case, minus quotes.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    public let type: String
    public let subtype: String
    public let parameters: [String: String]

    public init(type: String, subtype: String, parameters: [String: String] = [:]) {
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        self.parameters = parameters
    }

    /// Parses a header value; nil when it has no `type/subtype` shape.
    public init?(_ header: String) {
        var pieces = header.split(separator: ";", omittingEmptySubsequences: false)
        guard !pieces.isEmpty else { return nil }
        let essence = pieces.removeFirst().trimmingASCIIWhitespace()
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts.allSatisfy({ $0.allSatisfy(MediaType.isTokenCharacter) }) else { return nil }
        var parameters: [String: String] = [:]
        for piece in pieces {
            guard let eq = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<eq].trimmingASCIIWhitespace().lowercased()
            var value = piece[piece.index(after: eq)...].trimmingASCIIWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            if !name.isEmpty { parameters[name] = value }
        }
        self.init(type: String(parts[0]), subtype: String(parts[1]), parameters: parameters)
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

    static func isTokenCharacter(_ c: Character) -> Bool {
        guard let a = c.asciiValue, a > 0x20, a < 0x7F else { return false }
        return !"()<>@,;:\\\"/[]?={}".contains(c)
    }
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
