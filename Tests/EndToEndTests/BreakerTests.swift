import Foundation
import Testing
import TestSupport

/// `breaker` through the daemon (DESIGN §11): what opens it (5xx, answers the serializer
/// refuses), `circuit-open` while open, the half-open probe, stale answers from the cache.
@Suite struct BreakerTests {
    static func state(_ proxy: ProxyHarness, route: String = "api") throws -> String? {
        let routes = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]]
        return (routes?.first { $0["name"] as? String == route }?["breaker"] as? [String: Any])?["state"] as? String
    }

    /// Sends `target` until one reaches the stub (its count of `key` grows), within 10 s:
    /// the probe once the breaker's open time is over. Returns that reply.
    static func probe(_ proxy: ProxyHarness, _ target: String, key: String) throws -> RawResponse? {
        let before = try RetryTests.seen(proxy, key)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let reply = try proxy.get(target)
            if try RetryTests.seen(proxy, key) > before { return reply }
            #expect(reply.status == 503 && proxy.json(reply)?["type"] as? String == "urn:serializerd:circuit-open")
            usleep(50_000)
        }
        return nil
    }

    @Test func fiveHundredsOpenItAndTheProbeDecides() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    breaker: { failures: 3, window: 10s, open: 1s }\n"))
        defer { proxy.finish() }
        for _ in 0..<3 { #expect(try proxy.get("/api/flaky?fail=1000&key=dark").status == 503) }
        #expect(try Self.state(proxy) == "open")
        // Open: refused at once, without a request to the upstream, saying when to try again.
        let start = Date()
        let refused = try proxy.get("/api/flaky?fail=1000&key=dark")
        #expect(Date().timeIntervalSince(start) < 0.5)
        #expect(refused.status == 503 && refused.header("Retry-After") == "1")
        let problem = proxy.json(refused)
        #expect(problem?["type"] as? String == "urn:serializerd:circuit-open" && problem?["code"] as? Int == -1004, "\(refused.text)")
        #expect(try RetryTests.seen(proxy, "dark") == 3)
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_breaker_state{route=\"api\"}"] == 2)
        #expect(proxy.daemon.waitForText { $0.contains("\"msg\":\"breaker_changed\"") && $0.contains("\"to\":\"open\"") })
        // The probe fails: open again.
        let failing = try Self.probe(proxy, "/api/flaky?fail=1000&key=dark", key: "dark")
        let afterFailing = try Self.state(proxy)
        #expect(failing?.status == 503 && afterFailing == "open")
        // The upstream is back: the next probe succeeds and closes it.
        let healed = try Self.probe(proxy, "/api/flaky?fail=0&key=dark", key: "dark")
        let afterHealed = try Self.state(proxy)
        #expect(healed?.status == 200 && afterHealed == "closed")
        #expect(try proxy.get("/api/flaky?fail=0&key=dark").status == 200)
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_breaker_state{route=\"api\"}"] == 0)
    }

    /// An HTML page with status 200 where JSON was expected counts as a failure; a 4xx
    /// does not, and a success ends the streak.
    @Test func answersTheSerializerRefusesOpenItAndFourHundredsDoNot() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    breaker: { failures: 3, window: 10s, open: 30s }\n"))
        defer { proxy.finish() }
        for _ in 0..<5 { #expect(try proxy.get("/api/json?status=404").status == 404) }
        #expect(try proxy.get("/api/json?type=text/html").status == 502)
        #expect(try proxy.get("/api/json?type=text/html").status == 502)
        #expect(try proxy.get("/api/json").status == 200)
        #expect(try Self.state(proxy) == "closed")
        for _ in 0..<3 { #expect(try proxy.get("/api/json?type=text/html").status == 502) }
        #expect(try Self.state(proxy) == "open")
        let refused = try proxy.get("/api/json")
        #expect(refused.status == 503 && Int(refused.header("Retry-After") ?? "") ?? 0 >= 29)
    }

    @Test func aStoredAnswerStandsInWhileOpen() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    cache: { stale_if_error: 60s }\n    breaker: { failures: 2, open: 30s }\n"))
        defer { proxy.finish() }
        let key = "breaker-\(UUID().uuidString.prefix(8))"
        #expect(try proxy.get("/api/cached/\(key)?cc=max-age=0").status == 200)
        #expect(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachemode/\(key)?mode=503").status == 200)
        // The upstream's 503s are answered from the cache, and open the breaker.
        for _ in 0..<2 {
            let stale = try proxy.get("/api/cached/\(key)?cc=max-age=0")
            #expect(stale.status == 200 && stale.header("Cache-Status")?.contains("fwd=stale") == true)
        }
        #expect(try Self.state(proxy) == "open")
        let requests = proxy.json(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachestate/\(key)"))?["requests"] as? Int
        // Open: still answered from the cache, and the upstream is not asked.
        let held = try proxy.get("/api/cached/\(key)?cc=max-age=0")
        #expect(held.status == 200 && held.header("Cache-Status")?.contains("fwd=stale") == true, "\(held.status) \(held.text)")
        let after = proxy.json(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachestate/\(key)"))?["requests"] as? Int
        #expect(requests != nil && after == requests)
    }

    @Test func badBreakersAreConfigErrorsWithTheirPosition() throws {
        try expectCheckRefuses("breaker", [
            ("{ failures: 0 }", "5:26: error: routes[0].breaker.failures: expected an integer from 1 to 1000"),
            ("{ open: 2h }", "routes[0].breaker.open: expected at most 1h, found '2h'"),
            ("{ window: soon }", "routes[0].breaker.window: expected a positive duration"),
        ])
    }
}
