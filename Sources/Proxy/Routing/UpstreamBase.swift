import HTTPCore

/// A route's `upstream:` URL with AF's baseURL rules: a path without a trailing slash
/// gets one (`https://h/v1` → `https://h/v1/`), and the client's remainder is appended
/// as a relative path that can never leave the base.
public struct UpstreamBase: Sendable, Equatable, CustomStringConvertible {
    public let scheme: String
    /// `host` or `host:port` as written (IPv6 in brackets).
    public let authority: String
    /// Always ends with `/`.
    public let path: String
    /// `scheme://authority/path/`, the prefix of every joined URL.
    public let description: String

    public init?(_ text: String) {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        guard !rest.contains("?"), !rest.contains("#"), !rest.contains("@") else { return nil }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        guard !authority.isEmpty, authority.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        var path = String(rest[slash...])
        if path.isEmpty { path = "/" }
        if !path.hasSuffix("/") { path += "/" }
        guard path.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        self.scheme = scheme
        self.authority = authority
        self.path = path
        description = "\(scheme)://\(authority)\(path)"
    }

    /// Joins the client's path remainder (what follows the route prefix, without a
    /// leading `/`) and query. Fails for any `.`/`..` segment,
    /// empty segment (`//`), or their percent-encoded forms, and for a raw backslash,
    /// space or control byte, so the result stays under the base URL. Other
    /// percent-escapes are forwarded as sent.
    public func join(remainder: Substring, query: String?) -> Result<String, PathEscape> {
        var relative = remainder
        let problem = relative.withUTF8 { bytes -> PathEscape? in
            guard let first = bytes.first else { return nil }
            if first == UInt8(ascii: "/") { return .emptySegment }
            var start = 0
            while true {
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: "/") { end += 1 }
                if let problem = Self.check(UnsafeBufferPointer(rebasing: bytes[start..<end]), isLast: end == bytes.count) {
                    return problem
                }
                if end == bytes.count { return nil }
                start = end + 1
            }
        }
        if let problem { return .failure(problem) }
        var url = description + relative
        if let query, !query.isEmpty { url += "?" + query }
        return .success(url)
    }

    static func check(_ segment: UnsafeBufferPointer<UInt8>, isLast: Bool) -> PathEscape? {
        if segment.isEmpty { return isLast ? nil : .emptySegment }
        if segment.contains(where: { $0 < 0x21 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) { return .invalidCharacter }
        if !segment.contains(UInt8(ascii: "%")) {
            // No escapes: only a literal "." or ".." can be a dot segment.
            return segment.allSatisfy({ $0 == UInt8(ascii: ".") }) && segment.count <= 2 ? .dotSegment : nil
        }
        let decoded = percentDecoded(Array(segment))
        if decoded == [0x2E] || decoded == [0x2E, 0x2E] { return .dotSegment }
        if decoded.contains(UInt8(ascii: "/")) || decoded.contains(UInt8(ascii: "\\")) { return .encodedSeparator }
        // Any other escape (`%20`, `%2C`, even `%00`) is the upstream's to interpret: sent as is.
        return nil
    }

    /// Decodes %XX repeatedly, so `%252e` cannot hide a dot either.
    static func percentDecoded(_ segment: [UInt8]) -> [UInt8] {
        var current = segment
        for _ in 0..<3 {
            let decoded = Percent.decode(current)
            // Each escape decoded shortens the text by two bytes.
            if decoded.count == current.count { break }
            current = decoded
        }
        return current
    }
}

/// Why a client path was refused (→ 400 invalid-path).
public enum PathEscape: Error, Sendable, Equatable, CustomStringConvertible {
    case dotSegment, emptySegment, encodedSeparator, invalidCharacter

    public var description: String {
        switch self {
        case .dotSegment: return "the path contains a '.' or '..' segment"
        case .emptySegment: return "the path contains an empty segment ('//')"
        case .encodedSeparator: return "the path contains an encoded '/' or '\\'"
        case .invalidCharacter: return "the path contains a control character, space or backslash"
        }
    }
}
