internal import CCurl
internal import CShims
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

    /// The cookies held now.
    public func cookies() -> [Cookie] {
        guard let easy = curl_easy_init() else { return [] }
        defer { curl_easy_cleanup(easy) }
        guard (try? attach(to: easy)) != nil else { return [] }
        var list: UnsafeMutableRawPointer?
        guard cshim_easy_getinfo_pointer(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return [] }
        var out: [Cookie] = []
        var node = list?.assumingMemoryBound(to: curl_slist.self)
        while let current = node {
            if let line = current.pointee.data {
                // Netscape format: domain, tailmatch, path, secure, expires, name, value.
                let fields = String(cString: line).split(separator: "\t", omittingEmptySubsequences: false)
                if fields.count >= 7 {
                    var domain = String(fields[0])
                    if domain.hasPrefix("#HttpOnly_") { domain.removeFirst("#HttpOnly_".count) }
                    out.append(Cookie(domain: domain, path: String(fields[2]), name: String(fields[5]), secure: fields[3] == "TRUE",
                                      expires: Int(fields[4]) ?? 0))
                }
            }
            node = current.pointee.next
        }
        curl_slist_free_all(list?.assumingMemoryBound(to: curl_slist.self))
        return out
    }

    /// Forgets every cookie; how many there were.
    @discardableResult
    public func clear() -> Int {
        let count = cookies().count
        guard let easy = curl_easy_init() else { return 0 }
        defer { curl_easy_cleanup(easy) }
        guard (try? attach(to: easy)) != nil else { return 0 }
        _ = cshim_easy_setopt_string(easy, CURLOPT_COOKIELIST, "ALL")
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
