import Foundation
import TestSupport
import Testing

/// A route's cookies (DESIGN §2 `cookies:`): passed through by default, or kept by the
/// daemon in a jar every worker shares and no other route sees.
@Suite(.timeLimit(.minutes(5)))
struct CookieTests {
    static func echoedCookie(_ proxy: ProxyHarness, _ target: String, headers: [(String, String)] = []) throws -> String? {
        let reply = try proxy.get(target, headers: headers)
        return (proxy.json(reply)?["headers"] as? [String: Any])?["cookie"] as? String
    }

    @Test func passForwardsBothWays() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let reply = try proxy.get("/api/json", headers: [("X-Echo-Set-Cookie", "a=1; Path=/")])
        #expect(reply.status == 200 && reply.header("Set-Cookie") == "a=1; Path=/")
        #expect(try Self.echoedCookie(proxy, "/api/echo", headers: [("Cookie", "mine=1")]) == "mine=1")
    }

    @Test func aJarKeepsTheRoutesCookiesForAllWorkersAndNoOtherRoute() throws {
        let routes = route("kept", prefix: "/kept/", extra: "    cookies: jar\n") + route("other", prefix: "/other/", extra: "    cookies: jar\n")
            + route("api", prefix: "/api/")
        let proxy = try ProxyHarness(routes: routes, workers: 2)
        defer { proxy.finish() }
        let set = try proxy.get("/kept/json", headers: [("X-Echo-Set-Cookie", "sid=S3CR3T-SID; Path=/")])
        #expect(set.status == 200 && set.header("Set-Cookie") == nil)
        // Every later request of the route carries it, whichever worker takes it; the
        // client's own Cookie is not forwarded.
        for _ in 0..<8 {
            #expect(try Self.echoedCookie(proxy, "/kept/echo", headers: [("Cookie", "mine=1")]) == "sid=S3CR3T-SID")
        }
        #expect(try Self.echoedCookie(proxy, "/other/echo") == nil)
        #expect(try Self.echoedCookie(proxy, "/api/echo") == nil)
        // Names and domains, never values.
        let listed = try proxy.get("/-/cookies/kept")
        #expect(listed.status == 200 && !listed.text.contains("S3CR3T"))
        let cookies = proxy.json(listed)?["cookies"] as? [[String: Any]] ?? []
        #expect(cookies.count == 1 && cookies.first?["name"] as? String == "sid" && cookies.first?["domain"] as? String == "127.0.0.1")
        #expect(cookies.first?["value"] as? String == "[redacted]")
        #expect(try proxy.get("/-/cookies/api").status == 404)
        #expect(try proxy.get("/-/cookies/kept", method: "DELETE", host: "evil.example").status == 403)
        let cleared = try proxy.get("/-/cookies/kept", method: "DELETE")
        #expect(cleared.status == 200 && proxy.json(cleared)?["cleared"] as? Int == 1)
        #expect(try Self.echoedCookie(proxy, "/kept/echo") == nil)
    }

    @Test func aFloodOfCookiesIsBoundedByLibcurlsLimits() throws {
        let proxy = try ProxyHarness(routes: route("kept", prefix: "/kept/", extra: "    cookies: jar\n"), workers: 1)
        defer { proxy.finish() }
        #expect(try proxy.get("/kept/json?setcookies=2000").status == 200)
        let held = proxy.json(try proxy.get("/-/cookies/kept"))?["cookies"] as? [[String: Any]] ?? []
        #expect(held.count == 50, "\(held.count)")
        // A 60 KB cookie is not kept; the answer still arrives.
        #expect(try proxy.get("/kept/json?bigcookie=60000").status == 200)
        let names = (proxy.json(try proxy.get("/-/cookies/kept"))?["cookies"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(!names.contains("big"))
        // A 1 MB cookie makes the response's fields larger than libcurl takes (100 KB): the
        // answer is refused as a whole, the jar unchanged.
        let giant = try proxy.get("/kept/json?bigcookie=1000000")
        #expect(giant.status == 502 && proxy.json(giant)?["code"] as? Int == 27)
        // What is sent stays bounded too: the next request still goes out and is answered.
        #expect(try proxy.get("/kept/echo").status == 200)
    }

    /// libcurl sends nothing of a jar on a connect-only handshake: the daemon applies it.
    @Test func aJarsCookiesGoWithAWebSocketHandshakeAndItsAnswerSetsThem() throws {
        let proxy = try ProxyHarness(routes: "  - name: ws\n    match: { prefix: /ws/ }\n    upstream: {stub}\n    cookies: jar\n",
                                     script: "ws_upstream.py")
        defer { proxy.finish() }
        let login = try proxy.get("/ws/login")
        #expect(login.status == 200 && login.header("Set-Cookie") == nil)
        // The jar's cookie for this path goes up, not one for another path, nor the client's.
        let ws = try WSClient(proxy.port, "/ws/setcookie", extra: "Cookie: mine=1\r\n")
        #expect(ws.header("Set-Cookie") == nil, "\(ws.head)")
        ws.send(opcode: 1, Array("hi".utf8))
        #expect(ws.next()?.text == "hi")
        let first = proxy.stub.waitForLine { $0.hasPrefix("headers ") } ?? ""
        #expect(first.contains("\"cookie\": \"session=abc\"") && !first.contains("mine") && !first.contains("elsewhere"), "\(first)")
        // The 101 set one cookie and expired the other: the next handshake carries the new one.
        _ = try WSClient(proxy.port, "/ws/echo")
        #expect(proxy.stub.waitForText { _ in proxy.stub.lines().filter { $0.hasPrefix("headers ") }.count == 2 })
        let second = proxy.stub.lines().last { $0.hasPrefix("headers ") } ?? ""
        #expect(second.contains("\"cookie\": \"fresh=new1\""), "\(second)")
        let names = (proxy.json(try proxy.get("/-/cookies/ws"))?["cookies"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.sorted() == ["elsewhere", "fresh"], "\(names)")
    }

    @Test func aBadSettingIsAConfigError() throws {
        let run = try checkRoute("cookies", "keep")
        #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains("expected pass or jar, found 'keep'"))
    }
}
