internal import CCurl
internal import CShims
import HTTPCore
import Synchronization

/// A route's cookies kept by the daemon (`cookies: jar`, AF's HTTPShouldHandleCookies):
/// libcurl's cookie engine on a share handle every worker's transfers of the route use,
/// under one mutex. One jar per route name, kept across reloads; never shared by routes.
public final class CookieJar: @unchecked Sendable {
    /// `struct cshim_jar *`: the share and its mutex, freed with the jar.
    private let jar: OpaquePointer
    public let route: String
    /// Part of the transfer-handle pool's key: handles are made for one jar.
    let id: String

    init?(route: String, id: String) {
        guard let jar = cshim_jar_new() else { return nil }
        self.jar = jar
        self.route = route
        self.id = id
    }

    deinit { cshim_jar_free(jar) }

    /// Attaches the jar to a handle made for it (the cookie engine on, nothing read from disk).
    func attach(to easy: UnsafeMutableRawPointer) throws(CurlError) {
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_SHARE, UnsafeMutableRawPointer(cshim_jar_share(jar))), "CURLOPT_SHARE")
        try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_COOKIEFILE, ""), "CURLOPT_COOKIEFILE")
    }

    /// One cookie as `/-/cookies/<route>` shows it: never its value.
    public struct Cookie: Sendable, Equatable {
        public let domain: String
        public let path: String
        public let name: String
        public let secure: Bool
        /// Seconds since the epoch; 0 for a session cookie.
        public let expires: Int
    }

    /// The cookies held now (libcurl's list keeps an expired one until its next pass).
    public func cookies() -> [Cookie] {
        let now = Int(Clock.wall())
        return held().filter { $0.expires == 0 || $0.expires > now }.map { Cookie(domain: $0.domain, path: $0.path, name: $0.name, secure: $0.secure, expires: $0.expires) }
    }

    /// The `Cookie` field for a request to `url` that libcurl does not make itself (a
    /// connect-only handshake); nil when no cookie applies.
    public func header(for url: String, now: Int) -> String? {
        guard let target = Self.target(url) else { return nil }
        return JarCookie.header(held(), host: target.host, path: target.path, secure: target.secure, now: now)
    }

    /// Keeps the cookies an answer libcurl did not read (a handshake's 101) sets.
    public func store(setCookies: [String], from url: String, now: Int) {
        guard !setCookies.isEmpty, let target = Self.target(url) else { return }
        withHandle { easy in
            for value in setCookies {
                guard let cookie = JarCookie(setCookie: value, host: target.host, requestPath: target.path, now: now) else { continue }
                // A secure cookie is kept only from a secure answer (RFC 6265bis §5.6 step 8).
                if cookie.secure && !target.secure { continue }
                _ = cshim_easy_setopt_string(easy, CURLOPT_COOKIELIST, cookie.netscapeLine)
            }
        }
    }

    private func held() -> [JarCookie] {
        withHandle { easy in
            var list: UnsafeMutableRawPointer?
            guard cshim_easy_getinfo_pointer(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return [] }
            defer { curl_slist_free_all(list?.assumingMemoryBound(to: curl_slist.self)) }
            var out: [JarCookie] = []
            var node = list?.assumingMemoryBound(to: curl_slist.self)
            while let current = node {
                if let line = current.pointee.data, let cookie = JarCookie(netscapeLine: String(cString: line)) { out.append(cookie) }
                node = current.pointee.next
            }
            return out
        } ?? []
    }

    /// A handle attached to the jar for one call.
    private func withHandle<T>(_ body: (UnsafeMutableRawPointer) -> T) -> T? {
        guard let easy = curl_easy_init() else { return nil }
        defer { curl_easy_cleanup(easy) }
        guard (try? attach(to: easy)) != nil else { return nil }
        return body(easy)
    }

    /// Host, path and whether the scheme is secure, of `scheme://host[:port]/path?query`.
    static func target(_ url: String) -> (host: String, path: String, secure: Bool)? {
        let b = Array(url.utf8)
        guard let colon = b.firstIndex(of: UInt8(ascii: ":")), b[colon...].starts(with: "://".utf8) else { return nil }
        let scheme = String(decoding: b[..<colon], as: UTF8.self).lowercased()
        let start = colon + 3
        let end = b[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? b.count
        var authority = b[start..<end]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
        let host: ArraySlice<UInt8>
        if authority.first == UInt8(ascii: "["), let close = authority.firstIndex(of: UInt8(ascii: "]")) {
            host = authority[...close]
        } else {
            host = authority.prefix { $0 != UInt8(ascii: ":") }
        }
        guard !host.isEmpty else { return nil }
        let path = b[end...].prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return (String(decoding: host, as: UTF8.self).lowercased(), path.first == UInt8(ascii: "/") ? String(decoding: path, as: UTF8.self) : "/",
                scheme == "https" || scheme == "wss")
    }

    /// Forgets every cookie; how many there were.
    @discardableResult
    public func clear() -> Int {
        let count = held().count
        withHandle { _ = cshim_easy_setopt_string($0, CURLOPT_COOKIELIST, "ALL") }
        return count
    }
}

/// One jar per route name, for the life of the process.
public final class CookieJars: Sendable {
    private let jars = Mutex<[String: CookieJar]>([:])

    public init() {}

    public func jar(route: String) -> CookieJar? {
        jars.withLock { jars in
            if let jar = jars[route] { return jar }
            guard let jar = CookieJar(route: route, id: "jar:" + route) else { return nil }
            jars[route] = jar
            return jar
        }
    }
}
