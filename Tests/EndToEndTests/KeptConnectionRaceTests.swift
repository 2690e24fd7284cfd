import Foundation
import TestSupport
import Testing

/// An upstream that gives up each kept connection just as it is reused (DESIGN §11):
/// an idempotent request is sent again on a new connection every time, and reaches the
/// client as the answer; a POST is never sent twice.
@Suite(.timeLimit(.minutes(5)))
struct KeptConnectionRaceTests {
    /// serializerd (one worker) in front of Tests/Fixtures/closing_upstream.py.
    /// With `retry` set on the route, the resends are still not retries.
    static func run(reset: Bool, retry: Bool = false) throws {
        let (upstream, upstreamPort) = try StubUpstream.start(reset ? ["--reset"] : [], script: "closing_upstream.py")
        defer { upstream.stop() }
        let yaml = "listen: 127.0.0.1:0\nworkers: 1\nroutes:\n  - name: api\n    match: { prefix: /api/ }\n"
            + "    upstream: http://127.0.0.1:\(upstreamPort)/v1\n    response: { serializer: raw }\n"
            + (retry ? "    retry: { attempts: 3, on: [connect, reset, timeout, 502, 503, 504] }\n" : "")
        let (daemon, port, configPath) = try DaemonUnderTest.start(config: yaml)
        defer {
            daemon.stop()
            try? FileManager.default.removeItem(atPath: configPath)
        }
        var failures: [String] = []
        for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "POST"] {
            for n in 0..<100 {
                let id = "\(method.lowercased())-\(n)"
                let reply = try RawHTTP.request(port: port, method: method, target: "/api/x", headers: [("X-Request-Id", id)],
                                                body: method == "POST" || method == "PUT" ? Array("{\"n\":\(n)}".utf8) : [])
                if reply.status != 200 { failures.append("\(method) #\(n): \(reply.status) \(reply.text)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5)) (\(failures.count) in all)")
        let stats = try RawHTTP.request(port: upstreamPort, target: "/stats")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])
        let seen = try #require(doc["seen"] as? [String: Int])
        // The upstream did drop connections under the idempotent requests (the race happened)…
        #expect((doc["dropped"] as? Int ?? 0) >= 100, "\(doc["dropped"] ?? "none") dropped")
        // …and every POST reached it exactly once.
        let posts = seen.filter { $0.key.hasPrefix("POST ") }
        #expect(posts.count == 100)
        #expect(posts.values.allSatisfy { $0 == 1 }, "\(posts.filter { $0.value != 1 })")
        if retry {
            // A resend on a new connection is not an attempt: no retry counted, no request
            // with `attempts` in its completion event.
            let metrics = try RawHTTP.request(port: port, target: "/metrics").text
            #expect(!metrics.contains("serializerd_retries_total"), "\(metrics.split(separator: "\n").filter { $0.contains("retries") })")
            #expect(daemon.waitForLine { $0.contains("\"request_id\":\"post-99\"") } != nil)
            #expect(!daemon.lines().contains { $0.contains("\"attempts\"") })
        }
    }

    @Test func aPlainCloseOnReuseIsNeverSeenByTheClientNorDoublesAPost() throws {
        try Self.run(reset: false)
    }

    @Test func aResetOnReuseIsNeverSeenByTheClientNorDoublesAPost() throws {
        try Self.run(reset: true)
    }

    @Test func withRetryTheResendIsStillNotAnAttempt() throws {
        try Self.run(reset: true, retry: true)
    }
}
