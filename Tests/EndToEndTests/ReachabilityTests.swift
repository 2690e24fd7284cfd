import Foundation
import TestSupport
import Testing

/// Reachability (DESIGN §6): each upstream's state from what its requests see and from an
/// active probe; the state in /-/routes, /metrics, the log and /-/events; failing at once
/// while the probe says down.
@Suite(.timeLimit(.minutes(5)))
struct ReachabilityTests {
    static func reachability(_ proxy: ProxyHarness, _ route: String) -> [String: Any]? {
        guard let reply = try? proxy.get("/-/routes") else { return nil }
        let routes = proxy.json(reply)?["routes"] as? [[String: Any]]
        return routes?.first { $0["name"] as? String == route }?["reachability"] as? [String: Any]
    }

    static func waitFor(_ proxy: ProxyHarness, _ route: String, timeout: Double = 10, _ done: ([String: Any]) -> Bool) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let state = reachability(proxy, route), done(state) { return state }
            usleep(20_000)
        }
        return nil
    }

    @Test func requestsTellWhetherTheUpstreamAnswers() throws {
        let routes = route("up", prefix: "/up/") + "  - name: down\n    match: { prefix: /down/ }\n    upstream: http://127.0.0.1:9/v1\n"
        let proxy = try ProxyHarness(routes: routes, workers: 1)
        defer { proxy.finish() }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        #expect(Self.reachability(proxy, "down")?["state"] as? String == "unknown")
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_upstream_up{route=\"down\"}"] == nil)
        // One refused connection is not enough; two in a row are.
        #expect(try proxy.get("/down/x").status == 502)
        #expect(Self.reachability(proxy, "down")?["state"] as? String == "unknown")
        #expect(try proxy.get("/down/x").status == 502)
        let down = Self.reachability(proxy, "down")
        #expect(down?["state"] as? String == "unreachable" && down?["since"] is String && down?["failing_fast"] as? Bool == false)
        #expect(try proxy.get("/up/json").status == 200)
        #expect(Self.reachability(proxy, "up")?["state"] as? String == "reachable")
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_upstream_up{route=\"down\"}"] == 0 && metrics["serializerd_upstream_up{route=\"up\"}"] == 1)
        // Each change is an event on /-/events and a line in the log.
        let text = stream.read(untilAll: ["\"route\":\"down\",\"from\":\"unknown\",\"to\":\"unreachable\"", "\"route\":\"up\",\"from\":\"unknown\",\"to\":\"reachable\""])
        #expect(text.contains("event: reachability_changed\ndata: {\"route\":\"down\""), "\(text)")
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"reachability_changed\"") && $0.contains("\"route\":\"down\"") } != nil)
    }

    @Test func whileTheProbeSaysDownRequestsFailAtOnceOrGetAStaleEntry() throws {
        let extra = "    health: { path: cached/probe, interval: 200ms }\n    cache: { stale_if_error: 1m }\n"
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: extra), workers: 1)
        defer { proxy.finish() }
        #expect(Self.waitFor(proxy, "api") { $0["state"] as? String == "reachable" } != nil)
        #expect((Self.reachability(proxy, "api")?["health"] as? [String: Any])?["path"] as? String == "cached/probe")
        let stale = try proxy.get("/api/cached/kept?cc=max-age=1")
        #expect(stale.status == 200)
        // The health endpoint starts answering 503: two probes later, unreachable.
        try CacheTests.setMode(proxy, "probe", "mode=503")
        #expect(Self.waitFor(proxy, "api") { $0["failing_fast"] as? Bool == true && $0["state"] as? String == "unreachable" } != nil)
        let failed = try proxy.get("/api/cached/other")
        #expect(failed.status == 502 && failed.header("Retry-After") == "1")
        #expect((proxy.json(failed)?["detail"] as? String)?.contains("health probe") == true)
        #expect(try CacheTests.requests(proxy, "other") == 0)
        // A stored entry past its freshness stands in (stale_if_error), with no request.
        let before = try CacheTests.requests(proxy, "kept")
        let covered = CacheTests.poll(proxy, "/api/cached/kept?cc=max-age=1") { $0.header("Cache-Status")?.contains("detail=error") == true }
        #expect(covered?.status == 200 && covered?.body == stale.body)
        #expect(try CacheTests.requests(proxy, "kept") == before)
        // Back: the probe's next success restores it.
        try CacheTests.setMode(proxy, "probe", "mode=json")
        #expect(Self.waitFor(proxy, "api") { $0["state"] as? String == "reachable" && $0["failing_fast"] as? Bool == false } != nil)
        #expect(try proxy.get("/api/cached/other").status == 200)
    }

    @Test func aProbeThatHangsOrRedirectsForeverCountsAsDown() throws {
        // One health URL never answers within the interval, the other redirects to itself.
        let routes = route("hangs", prefix: "/hangs/", extra: "    health: { path: slow?seconds=30, interval: 200ms }\n")
            + route("loops", prefix: "/loops/", extra: "    health: { path: loop, interval: 200ms }\n")
        let proxy = try ProxyHarness(routes: routes, workers: 1)
        defer { proxy.finish() }
        for name in ["hangs", "loops"] {
            #expect(Self.waitFor(proxy, name) { $0["failing_fast"] as? Bool == true } != nil, "\(name)")
            let reply = try proxy.get("/\(name)/json")
            #expect(reply.status == 502 && reply.header("Retry-After") == "1", "\(name)")
        }
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"reachability_changed\"") && $0.contains("\"route\":\"loops\"") } != nil)
    }

    @Test func aBadHealthSettingIsAConfigError() throws {
        for (health, message) in [("{ interval: 5s }", "missing required key 'path'"), ("{ path: /zen, interval: 10ms }", "at least 100ms"),
                                  ("{ path: ../../etc, interval: 1s }", "escapes")] {
            let run = try checkRoute("health", health, upstream: "http://127.0.0.1:9/v1/")
            #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains(message), "\(health): \(run.stderrText)")
        }
    }
}
