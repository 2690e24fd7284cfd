@testable import HTTPCore
import Testing

/// RFC 6265's storage and sending rules for a jar's cookies on a connect-only handshake.
@Suite struct JarCookieTests {
    let now = 1_800_000_000

    func received(_ header: String, host: String = "api.example.com", path: String = "/v1/chat/socket") -> JarCookie? {
        JarCookie(setCookie: header, host: host, requestPath: path, now: now)
    }

    @Test func aSetCookieIsStoredWithItsDefaults() throws {
        let cookie = try #require(received(" sid = a b ; HttpOnly; Secure"))
        #expect(cookie == JarCookie(domain: "api.example.com", includeSubdomains: false, path: "/v1/chat", secure: true, httpOnly: true,
                                    expires: 0, name: "sid", value: "a b"))
        #expect(received("sid=1", path: "/socket")?.path == "/")
        #expect(received("sid=1", path: "")?.path == "/")
        #expect(received("sid=1; Path=relative")?.path == "/v1/chat")
        #expect(received("sid=1; Path=/x")?.path == "/x")
    }

    @Test func expiryComesFromMaxAgeBeforeExpires() {
        #expect(received("a=1; Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT")?.expires == now + 60)
        #expect(received("a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT")?.expires == 1)
        #expect(received("a=1; Max-Age=0")?.expires == 1)
        #expect(received("a=1; Max-Age=-5")?.expires == 1)
        #expect(received("a=1; Max-Age=99999999999999999999999")?.expires == Int.max / 2)
        #expect(received("a=1; Max-Age=1x")?.expires == 0)
        #expect(received("a=1; Expires=someday")?.expires == 0)
    }

    @Test func aCookieToIgnoreIsNotStored() {
        #expect(received("novalue") == nil)
        #expect(received("=1") == nil)
        #expect(received("a=1\t2") == nil)
        #expect(received("a=" + String(repeating: "x", count: 5000)) == nil)
        // A Domain that does not cover the host that set it.
        #expect(received("a=1; Domain=other.com") == nil)
        #expect(received("a=1; Domain=i.example.com") == nil)
        #expect(received("a=1; Domain=ple.com", host: "example.com") == nil)
        #expect(received("a=1; Domain=exa\tmple.com") == nil)
        let wide = received("a=1; Domain=.Example.com")
        #expect(wide?.domain == "example.com" && wide?.includeSubdomains == true)
    }

    @Test func aRequestCarriesTheCookiesThatMatchIt() {
        let cookies = [
            JarCookie(domain: "example.com", includeSubdomains: true, path: "/", secure: false, httpOnly: false, expires: 0, name: "wide", value: "1"),
            JarCookie(domain: "example.com", includeSubdomains: false, path: "/", secure: false, httpOnly: false, expires: 0, name: "hostonly", value: "2"),
            JarCookie(domain: "api.example.com", includeSubdomains: false, path: "/v1", secure: false, httpOnly: false, expires: 0, name: "deep", value: "3"),
            JarCookie(domain: "api.example.com", includeSubdomains: false, path: "/", secure: true, httpOnly: false, expires: 0, name: "tls", value: "4"),
            JarCookie(domain: "api.example.com", includeSubdomains: false, path: "/", secure: false, httpOnly: false, expires: now, name: "old", value: "5"),
        ]
        func sent(_ host: String, _ path: String, secure: Bool = false) -> String? {
            JarCookie.header(cookies, host: host, path: path, secure: secure, now: now)
        }
        // Longer paths first; the host-only cookie not on a subdomain; the expired one never.
        #expect(sent("api.example.com", "/v1/socket") == "deep=3; wide=1")
        #expect(sent("API.example.com", "/v1", secure: true) == "deep=3; wide=1; tls=4")
        #expect(sent("api.example.com", "/v10") == "wide=1")
        #expect(sent("example.com", "/") == "wide=1; hostonly=2")
        #expect(sent("badexample.com", "/") == nil)
        #expect(JarCookie.pathMatches(request: "/v1/", cookie: "/v1/") && JarCookie.pathMatches(request: "/v1/a", cookie: "/v1/"))
        #expect(!JarCookie.domainMatches(host: "1.2.3.4", domain: "2.3.4"))
    }

    @Test func libcurlsLinesRoundTrip() throws {
        let cookie = JarCookie(domain: "example.com", includeSubdomains: true, path: "/p", secure: true, httpOnly: true, expires: 42,
                               name: "n", value: "")
        #expect(cookie.netscapeLine == "#HttpOnly_.example.com\tTRUE\t/p\tTRUE\t42\tn\t")
        #expect(JarCookie(netscapeLine: cookie.netscapeLine) == cookie)
        #expect(JarCookie(netscapeLine: "127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tv")?.domain == "127.0.0.1")
        #expect(JarCookie(netscapeLine: "# a comment") == nil)
        #expect(JarCookie(netscapeLine: "example.com\tFALSE\t/\tFALSE\tsoon\tsid\tv") == nil)
    }
}
