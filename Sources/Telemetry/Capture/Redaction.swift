#if canImport(Glibc)
import Glibc
#endif
import HTTPCore

/// `capture:` (DESIGN §2, §6): what is replaced by `[redacted]` before serializerd keeps,
/// lists, streams or writes anything. Bytes forwarded to the upstream or the client
/// never pass through here.
public struct Redaction: Sendable {
    public static let marker = "[redacted]"
    public static let defaultHeaders = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token"]
    public static let defaultQuery = ["api_key", "apikey", "key", "token", "access_token", "secret", "password", "signature", "sig", "code"]

    /// Lowercased header names.
    public let headerNames: Set<String>
    /// The same names as bytes, for a check that allocates nothing (tapes redact every
    /// recorded exchange's headers).
    private let headerBytes: [[UInt8]]
    /// Lowercased query parameter names (compared after percent-decoding).
    public let queryNames: Set<String>
    /// `redact_json`: each pointer's reference tokens, unescaped (`~1` → `/`, `~0` → `~`).
    /// A token `*` stands for any member or element.
    public private(set) var pointers: [[[UInt8]]]

    public init(headers: [String] = Redaction.defaultHeaders, query: [String] = Redaction.defaultQuery, json: [String] = []) {
        headerNames = Set(headers.map { $0.lowercased() })
        headerBytes = headerNames.map { Array($0.utf8) }
        queryNames = Set(query.map { $0.lowercased() })
        pointers = json.compactMap(Redaction.tokens)
    }

    /// The same settings, with each `redact_json` pointer also applied under `prefix` (a
    /// problem document carries the upstream's body at /upstream/body).
    public func alsoUnder(_ prefix: [String]) -> Redaction {
        var copy = self
        copy.pointers = pointers + pointers.map { prefix.map { Array($0.utf8) } + $0 }
        return copy
    }

    /// An RFC 6901 pointer's tokens; nil unless it is `/`-led and its escapes are `~0`/`~1`.
    public static func tokens(_ pointer: String) -> [[UInt8]]? {
        guard pointer.hasPrefix("/") else { return nil }
        var tokens: [[UInt8]] = []
        for part in pointer.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            var token: [UInt8] = []
            var k = part.startIndex
            while k < part.endIndex {
                let c = part[k]
                if c == UInt8(ascii: "~") {
                    let next = part.index(after: k)
                    guard next < part.endIndex, part[next] == UInt8(ascii: "0") || part[next] == UInt8(ascii: "1") else { return nil }
                    token.append(part[next] == UInt8(ascii: "0") ? UInt8(ascii: "~") : UInt8(ascii: "/"))
                    k = part.index(after: next)
                } else {
                    token.append(c)
                    k = part.index(after: k)
                }
            }
            tokens.append(token)
        }
        return tokens
    }

    public func isRedactedHeader(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isRedactedHeader($0) }
    }

    /// The same for a name's raw bytes.
    public func isRedactedHeader(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        headerBytes.contains { candidate in
            candidate.count == bytes.count && zip(candidate, bytes).allSatisfy { $0 == ($1 | (($1 &- 0x41) < 26 ? 0x20 : 0)) }
        }
    }

    /// Headers with the named ones' values replaced; order and names kept.
    public func headers(_ fields: [(String, String)]) -> [(String, String)] {
        fields.map { isRedactedHeader($0.0) ? ($0.0, Self.marker) : $0 }
    }

    public func headers(_ fields: HeaderFields) -> HeaderFields {
        HeaderFields(headers(fields.pairs))
    }

    /// A URL with named query parameters' values and any userinfo password replaced:
    /// `https://u:pw@h/p?api_key=k&x=1` → `https://u:[redacted]@h/p?api_key=[redacted]&x=1`.
    public func url(_ url: String) -> String {
        let text = Self.withoutPassword(url)
        // On the UTF-8 view: both delimiters are ASCII, and this runs per recorded exchange.
        guard let question = text.utf8.firstIndex(of: UInt8(ascii: "?")) else { return text }
        let fragmentStart = text.utf8[question...].firstIndex(of: UInt8(ascii: "#")) ?? text.endIndex
        let query = text[text.index(after: question)..<fragmentStart]
        return String(text[...question]) + self.query(String(query)) + String(text[fragmentStart...])
    }

    /// A URL with any userinfo password replaced, whatever `capture` says: the completion
    /// event's URL passes here on every request, so one memchr decides when it holds no `@`.
    public static func withoutPassword(_ url: String) -> String {
        var text = url
        let hasAt = text.withUTF8 { p in p.baseAddress.map { memchr($0, Int32(UInt8(ascii: "@")), p.count) != nil } ?? false }
        guard hasAt else { return url }
        let schemeEnd = text.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" }
        if let colon = text.firstIndex(of: ":"), colon < (schemeEnd ?? text.endIndex), text[colon...].hasPrefix("://") {
            let start = text.index(colon, offsetBy: 3)
            let authorityEnd = text[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            let authority = text[start..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: marker)
            }
        }
        return text
    }

    /// A query string (or form body) with the values of named parameters replaced.
    public func query(_ query: String) -> String {
        guard !queryNames.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.formDecoded(parts[0]).lowercased()
            return queryNames.contains(name) ? String(parts[0]) + "=" + Self.marker : String(pair)
        }.joined(separator: "&")
    }

    /// A URL's query parameters (after `?`, before `#`), names and values decoded: HAR's
    /// queryString.
    public static func queryPairs(_ url: String) -> [(String, String)] {
        // Found in the contiguous bytes: this runs for every recorded exchange.
        var text = url
        guard let at = text.withUTF8({ $0.firstIndex(of: UInt8(ascii: "?")) }) else { return [] }
        let query = text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: at + 1)...].split(separator: UInt8(ascii: "#"), maxSplits: 1,
                                                                                             omittingEmptySubsequences: false)[0]
        return Substring(query).split(separator: "&").map { pair in
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (formDecoded(halves[0]), halves.count > 1 ? formDecoded(halves[1]) : "")
        }
    }

    /// `a+b%20c` → `a b c` (invalid escapes kept as they are): names compare decoded.
    public static func formDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        let raw = Array(text.utf8)
        var k = 0
        while k < raw.count {
            if raw[k] == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if raw[k] == UInt8(ascii: "%"), k + 2 < raw.count, let hi = Hex.value(raw[k + 1]), let lo = Hex.value(raw[k + 2]) {
                bytes.append(hi << 4 | lo)
                k += 2
            } else {
                bytes.append(raw[k])
            }
            k += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The body with `redact_json`'s members replaced, or nil when nothing was: JSON
    /// (any body that starts with `{` or `[`, whatever its declared type, truncated or
    /// malformed included) and form bodies (`a[b]=…` is `/a/b`).
    public func body(_ bytes: [UInt8], contentType: String?) -> [UInt8]? {
        guard !pointers.isEmpty else { return nil }
        if let first = bytes.first(where: { !JSONRedactor.isSpace($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
            return JSONRedactor(pointers: pointers).redact(bytes)
        }
        if let type = contentType.flatMap(MediaType.init), type.essence == "application/x-www-form-urlencoded" {
            return FormRedactor(pointers: pointers).redact(bytes)
        }
        return nil
    }
}
