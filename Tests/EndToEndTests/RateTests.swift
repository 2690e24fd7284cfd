import Dispatch
import Foundation
import Testing
import TestSupport

/// `limits.rate` and the pauses an upstream asks for, through the daemon (DESIGN §11),
/// against a scripted origin that answers 429 beyond its own rate.
@Suite struct RateTests {
    /// What the origin did for `key`: served, refused, the most served in any second, and
    /// when each was served (seconds after the first).
    static func limited(_ proxy: ProxyHarness, key: String) throws -> (served: Int, refused: Int, busiest: Int, times: [Double]) {
        let doc = proxy.json(try proxy.get("/api/limitedstats?key=\(key)"))
        return (doc?["served"] as? Int ?? -1, doc?["refused"] as? Int ?? -1, doc?["busiest"] as? Int ?? -1,
                (doc?["times"] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? [])
    }

    /// Offered twice the route's rate for 10 s (40 threads, one request a second each, so
    /// that a request's wait does not hold back the next send), against an origin
    /// allowing exactly that rate: it never refuses one, the rate holds within 5 %, and
    /// every request is answered 200 or `overloaded` within its queue_timeout.
    @Test(.timeLimit(.minutes(5))) func theRouteRateKeepsTheUpstreamUnderItsLimit() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    limits: { rate: 20/s, queue_timeout: 1s }\n"))
        defer { proxy.finish() }
        let port = proxy.port
        let outcomes = Locked<[(status: Int, seconds: Double)]>([])
        let group = DispatchGroup()
        let start = Date().addingTimeInterval(0.2)
        for thread in 0..<40 {
            group.enter()
            Thread {
                // One request a second each, 40 together, paced from a common start.
                for k in 0..<10 {
                    let due = start.addingTimeInterval(Double(k) + Double(thread) * 0.025)
                    let ahead = due.timeIntervalSinceNow
                    if ahead > 0 { usleep(UInt32(ahead * 1_000_000)) }
                    let sent = Date()
                    let status = (try? RawHTTP.request(port: port, target: "/api/limited?limit=20&key=rate").status) ?? -1
                    let seconds = Date().timeIntervalSince(sent)
                    outcomes.update { $0.append((status, seconds)) }
                }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 40) == .success)
        let all = outcomes.current
        let stats = try Self.limited(proxy, key: "rate")
        #expect(stats.refused == 0, "the upstream refused \(stats.refused)")
        #expect(stats.busiest <= 20, "\(stats.busiest) in one second")
        #expect(all.allSatisfy { $0.status == 200 || $0.status == 503 }, "\(Set(all.map(\.status)))")
        // Within the queue_timeout (and a margin for the machine), never cut by the route timeout.
        #expect(all.allSatisfy { $0.seconds < 1.8 }, "slowest \(all.map(\.seconds).max() ?? 0) s")
        let served = all.filter { $0.status == 200 }.count
        #expect(served == stats.served)
        // 20 a second (1 % slower) over the 9 s of full demand after the first second.
        let rate = Double(stats.times.filter { $0 >= 1 && $0 < 10 }.count) / 9
        #expect(abs(rate - 20) / 20 < 0.05, "\(rate) a second: \(stats.served) in all")
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect((metrics["serializerd_rate_limited_total{route=\"api\",source=\"bucket\"}"] ?? 0) >= Double(all.count - served))
        #expect((metrics["serializerd_queue_wait_seconds_count{route=\"api\"}"] ?? 0) >= 1)
    }

    /// Routes that each meet one way of asking for a pause.
    static let pauses = [
        ("seconds", "h=Retry-After:2&status=429"),
        ("date", "h=Retry-After:{date}&status=503"),
        ("ratelimit", "h=RateLimit:%22default%22%3Br%3D0%3Bt%3D30"),
        ("xratelimit", "h=X-RateLimit-Remaining:0&h=X-RateLimit-Reset:30"),
    ]

    @Test func anUpstreamsPauseHoldsItsRoute() throws {
        let routes = Self.pauses.map { route($0.0, prefix: "/\($0.0)/") }.joined()
        let proxy = try ProxyHarness(routes: routes)
        defer { proxy.finish() }
        // Retry-After: 2 on a 429: the client hears the 429; the route's next request waits
        // for the pause to end, then goes.
        let asked = try proxy.get("/seconds/json?h=Retry-After:2&status=429")
        #expect(asked.status == 429 || asked.status == 502, "\(asked.status)")
        let paused = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]]
        let seconds = paused?.first { $0["name"] as? String == "seconds" }?["paused_seconds"] as? Double ?? 0
        #expect(seconds > 1 && seconds <= 2, "\(seconds)")
        let start = Date()
        let next = try proxy.get("/seconds/json")
        let waited = Date().timeIntervalSince(start)
        #expect(next.status == 200 && waited > 1 && waited < 3, "\(next.status) after \(waited) s")
        // Pauses past the route's queue_timeout (5 s by default): overloaded at once, with
        // the pause's length in Retry-After.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(30))
        for (name, query) in Self.pauses.dropFirst() {
            _ = try proxy.get("/\(name)/json?" + query.replacingOccurrences(of: "{date}", with: date.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
            let begun = Date()
            let held = try proxy.get("/\(name)/json")
            let retryAfter = Int(held.header("Retry-After") ?? "") ?? 0
            #expect(held.status == 503 && proxy.json(held)?["type"] as? String == "urn:serializerd:overloaded", "\(name): \(held.text)")
            #expect(retryAfter >= 28 && retryAfter <= 31 && Date().timeIntervalSince(begun) < 1, "\(name): Retry-After \(retryAfter)")
        }
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_rate_limited_total{route=\"seconds\",source=\"upstream\"}"] == 1)
        #expect(metrics["serializerd_rate_limited_total{route=\"date\",source=\"upstream\"}"] == 1)
    }
}
