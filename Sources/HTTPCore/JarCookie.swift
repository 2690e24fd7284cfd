/// One cookie of a route's jar, with the RFC 6265 rules libcurl applies to the requests it
/// makes itself but not to a connect-only handshake (a WebSocket's): which cookies a
/// request carries (§5.4) and how a `Set-Cookie` it received is stored (§5.2, §5.3).
/// libcurl's cookie list is the store; this reads and writes its lines (Netscape form:
/// domain, subdomains TRUE|FALSE, path, secure TRUE|FALSE, expiry, name, value, by tabs).
public struct JarCookie: Equatable, Sendable {
    /// Lowercased, without a leading dot.
    public var domain: String
    /// False: host-only (sent to `domain` exactly).
    public var includeSubdomains: Bool
    public var path: String
    public var secure: Bool
    public var httpOnly: Bool
    /// Seconds since the epoch; 0 for a session cookie.
    public var expires: Int
    public var name: String
    public var value: String

    /// A cookie's name and value together are held to this (RFC 6265 §6.1's minimum).
    public static let maxSize = 4096

    public init(domain: String, includeSubdomains: Bool, path: String, secure: Bool, httpOnly: Bool, expires: Int,
                name: String, value: String) {
        self.domain = domain
        self.includeSubdomains = includeSubdomains
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.expires = expires
        self.name = name
        self.value = value
    }

    // MARK: libcurl's lines

    /// A line of `CURLINFO_COOKIELIST`; nil when it is not one.
    public init?(netscapeLine line: String) {
        // Read as bytes, as libcurl does: as Characters, a tab or a dot followed by a
        // combining mark would be one Character, and no separator.
        var text = Array(line.utf8)[...]
        let httpOnly = text.starts(with: "#HttpOnly_".utf8)
        if httpOnly { text = text.dropFirst("#HttpOnly_".utf8.count) }
        let fields = text.split(separator: 0x09, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 7, let expires = Int(fields[4]), !fields[5].isEmpty else { return nil }
        // One leading dot marks a domain cookie, as libcurl writes and reads it.
        let domainBytes = fields[0].utf8.first == 0x2E ? fields[0].utf8.dropFirst() : fields[0].utf8[...]
        guard let first = domainBytes.first, first != 0x2E else { return nil }
        self.init(domain: String(decoding: domainBytes, as: UTF8.self).lowercased(), includeSubdomains: fields[1] == "TRUE",
                  path: fields[2], secure: fields[3] == "TRUE", httpOnly: httpOnly, expires: expires, name: fields[5], value: fields[6])
    }

    /// The line that stores this cookie through `CURLOPT_COOKIELIST`.
    public var netscapeLine: String {
        (httpOnly ? "#HttpOnly_" : "") + (includeSubdomains ? "." : "") + domain + "\t" + (includeSubdomains ? "TRUE" : "FALSE")
            + "\t" + path + "\t" + (secure ? "TRUE" : "FALSE") + "\t" + String(expires) + "\t" + name + "\t" + value
    }

    // MARK: receiving (RFC 6265 §5.2, §5.3)

    /// A `Set-Cookie` value received from `host` for `requestPath`; nil when the cookie is
    /// to be ignored (no `=`, an empty name, a control character or tab, over `maxSize`,
    /// or a `Domain` that does not cover `host`). An `Expires` not in an HTTP-date form is
    /// ignored, as the RFC says of one it cannot parse. A cookie already expired comes
    /// back with `expires` 1: storing it removes the one it replaces.
    public init?(setCookie: String, host: String, requestPath: String, now: Int) {
        var parts = setCookie.split(separator: ";", omittingEmptySubsequences: false)
        guard !parts.isEmpty, let equals = parts[0].firstIndex(of: "=") else { return nil }
        let pair = parts.removeFirst()
        let name = String(pair[..<equals].trimmingSpaces), value = String(pair[pair.index(after: equals)...].trimmingSpaces)
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maxSize,
              !(name + value).utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        let host = host.lowercased()
        var cookie = JarCookie(domain: host, includeSubdomains: false, path: Self.defaultPath(requestPath), secure: false,
                               httpOnly: false, expires: 0, name: name, value: value)
        var maxAge: Int?, expires: Int?
        for part in parts {
            let equals = part.firstIndex(of: "=")
            let key = part[..<(equals ?? part.endIndex)].trimmingSpaces.lowercased()
            let argument = equals.map { String(part[part.index(after: $0)...].trimmingSpaces) } ?? ""
            switch key {
            case "expires":
                if let seconds = HTTPDate.seconds(argument, now: Double(now)) { expires = max(1, Int(seconds)) }
            case "max-age":
                let negative = argument.hasPrefix("-")
                let digits = negative ? argument.dropFirst() : Substring(argument)
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { continue }
                // Zero or less: already expired. Too far ahead to count: kept as far ahead.
                if negative || digits.allSatisfy({ $0 == "0" }) {
                    maxAge = 1
                } else if let delta = Int(digits), delta < Int.max / 2 - now {
                    maxAge = now + delta
                } else {
                    maxAge = Int.max / 2
                }
            case "domain":
                var domain = Substring(argument.lowercased())
                if domain.hasPrefix(".") { domain = domain.dropFirst() }
                guard !domain.isEmpty else { continue }
                guard !domain.hasPrefix("."), !domain.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
                cookie.domain = String(domain)
                cookie.includeSubdomains = true
            case "path":
                if argument.hasPrefix("/"), !argument.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { cookie.path = argument }
            case "secure": cookie.secure = true
            case "httponly": cookie.httpOnly = true
            default: break
            }
        }
        if cookie.includeSubdomains {
            // A Domain that does not cover the host that set it: the cookie is ignored.
            guard Self.domainMatches(host: host, domain: cookie.domain) else { return nil }
            if cookie.domain == host, Self.isIPAddress(host) { cookie.includeSubdomains = false }
        }
        if let stamp = maxAge ?? expires { cookie.expires = stamp <= now ? 1 : stamp }
        self = cookie
    }

    /// RFC 6265 §5.1.4: the directory of the request's path.
    static func defaultPath(_ path: String) -> String {
        let path = path.prefix { $0 != "?" && $0 != "#" }
        guard path.hasPrefix("/"), !path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    // MARK: sending (RFC 6265 §5.4)

    /// Whether a request to `host` for `path` (without its query) carries this cookie.
    public func matches(host: String, path: String, secure: Bool, now: Int) -> Bool {
        if expires != 0 && expires <= now { return false }
        if self.secure && !secure { return false }
        let host = host.lowercased()
        if includeSubdomains ? !Self.domainMatches(host: host, domain: domain) : host != domain { return false }
        return Self.pathMatches(request: Substring(path), cookie: self.path)
    }

    /// The `Cookie` field for a request to `path` (without its query): longer paths first (RFC 6265 §5.4 step 2), nil
    /// when no cookie applies.
    public static func header(_ cookies: [JarCookie], host: String, path: String, secure: Bool, now: Int) -> String? {
        let sent = cookies.enumerated().filter { $0.element.matches(host: host, path: path, secure: secure, now: now) }
            .sorted { $0.element.path.utf8.count != $1.element.path.utf8.count
                ? $0.element.path.utf8.count > $1.element.path.utf8.count : $0.offset < $1.offset }
        guard !sent.isEmpty else { return nil }
        return sent.map { $0.element.name + "=" + $0.element.value }.joined(separator: "; ")
    }

    // MARK: rules

    /// RFC 6265 §5.1.3: the host is the domain, or ends in `.domain` and is not an address.
    /// Byte by byte, as the RFC compares them (canonical equivalence is not asked for).
    static func domainMatches(host: String, domain: String) -> Bool {
        let h = Array(host.utf8), d = Array(domain.utf8)
        if h == d { return true }
        return h.count > d.count && h[h.count - d.count - 1] == UInt8(ascii: ".") && h.suffix(d.count).elementsEqual(d)
            && !isIPAddress(host)
    }

    /// RFC 6265 §5.1.4, byte by byte.
    static func pathMatches(request: Substring, cookie: String) -> Bool {
        let r = request.isEmpty ? [UInt8(ascii: "/")] : Array(request.utf8), c = Array(cookie.utf8)
        guard r.count >= c.count, r.prefix(c.count).elementsEqual(c) else { return false }
        return r.count == c.count || c.last == UInt8(ascii: "/") || r[c.count] == UInt8(ascii: "/")
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.hasPrefix("[") || host.contains(":") || (!host.isEmpty && host.utf8.allSatisfy { $0 == 0x2E || ($0 >= 0x30 && $0 <= 0x39) })
    }
}
