import Foundation
import Testing
import TestSupport

/// `retry` through the daemon (DESIGN §11), against a stub that fails a request's first
/// attempts and counts them.
@Suite struct RetryTests {
    static let routes = route("api", prefix: "/api/", extra: "    retry: { attempts: 3, backoff: 10ms, max_backoff: 2s }\n")

    /// Requests of `key` the stub saw, asked of the stub itself (a pause may hold the route).
    static func seen(_ proxy: ProxyHarness, _ key: String) throws -> Int {
        proxy.json(try RawHTTP.request(port: proxy.stubPort, target: "/v1/flakystats?key=\(key)"))?["seen"] as? Int ?? -1
    }

    /// The completion event of request `id`, as the daemon logged it.
    static func event(_ proxy: ProxyHarness, _ id: String) -> [String: Any]? {
        guard let line = proxy.daemon.waitForLine(timeout: 10, { $0.contains("\"request_id\":\"\(id)\"") }),
              let data = line.data(using: .utf8) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    @Test func aGetIsSentAgainUntilItSucceeds() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/flaky?fail=2&key=get", headers: [("X-Request-Id", "retried-get")])
        #expect(reply.status == 200 && reply.text == #"{"ok":3}"#, "\(reply.status) \(reply.text)")
        #expect(try Self.seen(proxy, "get") == 3)
        // Server-Timing: the last attempt's time and the time before it.
        let timing = reply.header("Server-Timing") ?? ""
        #expect(timing.contains("upstream;dur=") && timing.contains("retry;dur="), "\(timing)")
        #expect(Self.event(proxy, "retried-get")?["attempts"] as? Int == 3)
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_retries_total{route=\"api\",reason=\"503\"}"] == 2)
        // A request that succeeds at once has no attempts in its event, no retry timing.
        let once = try proxy.get("/api/flaky?fail=0&key=once", headers: [("X-Request-Id", "once")])
        #expect(once.status == 200 && !(once.header("Server-Timing") ?? "").contains("retry"))
        #expect(Self.event(proxy, "once").map { $0["attempts"] == nil } == true)
    }

    @Test func attemptsRunOutAndTheLastAnswerStands() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/flaky?fail=9&key=out")
        #expect(reply.status == 503 && proxy.json(reply)?["type"] as? String != nil, "\(reply.text)")
        #expect(try Self.seen(proxy, "out") == 3)
    }

    @Test func onlyIdempotentRequestsAreSentAgain() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let post = try proxy.get("/api/flaky?fail=1&key=post", method: "POST", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        #expect(post.status == 503)
        #expect(try Self.seen(proxy, "post") == 1)
        // With Idempotency-Key the client says a second send is safe.
        let keyed = try proxy.get("/api/flaky?fail=1&key=keyed", method: "POST",
                                  headers: [("Content-Type", "application/json"), ("Idempotency-Key", "k-1")], body: Array("{}".utf8))
        #expect(keyed.status == 200)
        #expect(try Self.seen(proxy, "keyed") == 2)
        let put = try proxy.get("/api/flaky?fail=1&key=put", method: "PUT", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let putSeen = try Self.seen(proxy, "put")
        #expect(put.status == 200 && putSeen == 2)
    }

    @Test func aDroppedConnectionAndRetryAfterAreRetriedOn() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reset = try proxy.get("/api/flaky?fail=1&key=reset&mode=reset")
        #expect(reset.status == 200)
        #expect(try Self.seen(proxy, "reset") == 2)
        // A 503 asking for a second: the retry waits for it (max_backoff allows it).
        let start = Date()
        let patient = try proxy.get("/api/flaky?fail=1&key=later&h=Retry-After:1")
        let waited = Date().timeIntervalSince(start)
        #expect(patient.status == 200 && waited >= 0.95, "\(patient.status) after \(waited) s")
        // One asking for longer than max_backoff ends the retries: its answer stands.
        let impatient = try proxy.get("/api/flaky?fail=1&key=much&h=Retry-After:30&fail_status=429")
        let muchSeen = try Self.seen(proxy, "much")
        #expect(impatient.status == 429 && muchSeen == 1)
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_retries_total{route=\"api\",reason=\"reset\"}"] == 1)
    }

    /// A recording tape keeps the last attempt only: the answer the client got.
    @Test func theTapeKeepsTheLastAttempt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("retry-tape-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    tape: { mode: record }\n    retry: { backoff: 10ms }\n"),
                                     top: "tapes: { dir: \(dir) }\n")
        #expect(try proxy.get("/api/flaky?fail=2&key=taped").status == 200)
        #expect(TapeTests.waitForEntries(dir + "/api.har", 1))
        #expect(proxy.finish() == 0)
        let har = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: dir + "/api.har"))) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let response = entries.first?["response"] as? [String: Any]
        #expect(entries.count == 1 && response?["status"] as? Int == 200, "\(entries)")
        #expect(((response?["content"] as? [String: Any])?["text"] as? String)?.contains("\"ok\":3") == true, "\(response ?? [:])")
    }

    /// Against an upstream that always fails, retries stay within the budget: 10 % of the
    /// route's requests, or 3 in a second.
    @Test func theBudgetHoldsAgainstAnUpstreamThatAlwaysFails() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    retry: { attempts: 5, backoff: 1ms, budget: 10% }\n"))
        defer { proxy.finish() }
        let start = Date()
        let requests = 60
        for k in 0..<requests { #expect(try proxy.get("/api/flaky?fail=1000&key=dark&n=\(k)").status == 503) }
        let seconds = Date().timeIntervalSince(start)
        let retries = try Self.seen(proxy, "dark") - requests
        let allowed = Int(Double(requests) * 0.1) + 3 * (Int(seconds) + 1)
        #expect(retries >= 3 && retries <= allowed, "\(retries) retries of \(requests) requests in \(seconds) s")
        // Without a budget, 4 retries each would have gone.
        #expect(retries < requests * 4 / 2)
    }

    /// A retry is one more upstream request: the route's rate holds it as it holds a first
    /// attempt. At 1 a second, the third attempt goes no sooner than 2 s after the first.
    @Test func retriesKeepToTheRouteRate() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: """
                limits: { rate: 1/s, queue_timeout: 5s }
                retry: { attempts: 3, backoff: 10ms, max_backoff: 1s }

            """))
        defer { proxy.finish() }
        let start = Date()
        let reply = try proxy.get("/api/flaky?fail=2&key=paced")
        let seconds = Date().timeIntervalSince(start)
        #expect(reply.status == 200 && reply.text == #"{"ok":3}"#, "\(reply.status) \(reply.text)")
        #expect(seconds >= 2, "three attempts in \(seconds) s at 1 a second")
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect((metrics["serializerd_rate_limited_total{route=\"api\",source=\"bucket\"}"] ?? 0) >= 2)
        // A retry the rate could not let go within queue_timeout is not made: the answer stands.
        let tight = try ProxyHarness(routes: route("api", prefix: "/api/", extra: """
                limits: { rate: 1/m, queue_timeout: 1s }
                retry: { attempts: 3, backoff: 10ms, max_backoff: 1s }

            """))
        defer { tight.finish() }
        #expect(try tight.get("/api/flaky?fail=1&key=unpaced").status == 503)
        #expect(try Self.seen(tight, "unpaced") == 1)
    }

    @Test func badRetriesAreConfigErrorsWithTheirPosition() throws {
        try expectCheckRefuses("retry", [
            ("{ attempts: 1 }", "5:24: error: routes[0].retry.attempts: expected an integer from 2 to 10"),
            ("{ on: [connect, 302] }", "routes[0].retry.on[1]: expected connect, reset, timeout or a status from 400 to 599, found '302'"),
            ("{ budget: 10 }", "routes[0].retry.budget: expected a share of the route's requests such as 10%, found '10'"),
            ("{ backoff: 2s, max_backoff: 1s }", "routes[0].retry.max_backoff: max_backoff must be at least backoff"),
            ("{ colour: red }", "5:14: error: routes[0].retry.colour: unknown key"),
        ])
    }
}
