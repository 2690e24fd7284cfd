import Dispatch
import Foundation
import Testing
import TestSupport

/// `limits.concurrency`, `queue` and `queue_timeout` through the daemon (DESIGN §11),
/// against a stub that counts the requests it has in flight.
@Suite struct QueueTests {
    static func routes(_ limits: String) -> String {
        route("api", prefix: "/api/", extra: "    limits: \(limits)\n")
    }

    static func stats(_ proxy: ProxyHarness) throws -> (most: Int, order: [String]) {
        let doc = proxy.json(try proxy.get("/api/gatestats"))
        return (doc?["most"] as? Int ?? -1, doc?["order"] as? [String] ?? [])
    }

    /// The route's gate as `/-/routes` shows it: in flight and waiting, all workers together.
    static func gate(_ proxy: ProxyHarness) throws -> (inFlight: Int, waiting: Int) {
        let routes = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]]
        let limits = routes?.first?["limits"] as? [String: Any]
        return (limits?["in_flight"] as? Int ?? -1, limits?["waiting"] as? Int ?? -1)
    }

    static func waitFor(_ proxy: ProxyHarness, inFlight: Int, waiting: Int) throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try gate(proxy) == (inFlight, waiting) { return true }
            usleep(5_000)
        }
        return false
    }

    @Test func concurrencyIsNeverExceededAcrossBothWorkers() throws {
        let proxy = try ProxyHarness(routes: Self.routes("{ concurrency: 2 }"))
        defer { proxy.finish() }
        let statuses = Locked<[Int]>([])
        let port = proxy.port
        // Fresh connections land on both workers.
        DispatchQueue.concurrentPerform(iterations: 12) { k in
            let status = (try? RawHTTP.request(port: port, target: "/api/gate?seconds=0.15&tag=\(k)").status) ?? -1
            statuses.update { $0.append(status) }
        }
        #expect(statuses.current == Array(repeating: 200, count: 12))
        let (most, order) = try Self.stats(proxy)
        #expect(most == 2 && order.count == 12, "\(most) at once, \(order.count) sent")
        #expect(try Self.gate(proxy) == (0, 0))
    }

    @Test func waitersGoInTheOrderTheyCame() throws {
        let proxy = try ProxyHarness(routes: Self.routes("{ concurrency: 1, queue: 10 }"))
        defer { proxy.finish() }
        let port = proxy.port
        let group = DispatchGroup()
        let statuses = Locked<[Int]>([])
        func send(_ tag: String, seconds: Double) { Self.send(group, port: port, tag: tag, seconds: seconds, into: statuses) }
        let started = Date()
        send("first", seconds: 2)
        #expect(try Self.waitFor(proxy, inFlight: 1, waiting: 0))
        for (k, tag) in ["b", "c", "d", "e"].enumerated() {
            send(tag, seconds: 0.01)
            let queued = try Self.waitFor(proxy, inFlight: 1, waiting: k + 1)
            #expect(queued, "\(tag) is not waiting: \(String(describing: try? Self.gate(proxy))) after \(Date().timeIntervalSince(started)) s")
        }
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(statuses.current == Array(repeating: 200, count: 5))
        #expect(try Self.stats(proxy).order == ["first", "b", "c", "d", "e"])
    }

    /// Sends `GET /api/gate?seconds=…&tag=…` on a thread of its own (blocked senders must
    /// not hold back the next one: the global queue grows its threads slowly); its status
    /// joins `statuses` (-1: no answer), read before the lock is taken.
    static func send(_ group: DispatchGroup, port: Int, tag: String, seconds: Double, into statuses: Locked<[Int]>) {
        group.enter()
        Thread {
            let status = (try? RawHTTP.request(port: port, target: "/api/gate?seconds=\(seconds)&tag=\(tag)").status) ?? -1
            statuses.update { $0.append(status) }
            group.leave()
        }.start()
    }

    @Test func aFullQueueIsOverloadedAtOnce() throws {
        let proxy = try ProxyHarness(routes: Self.routes("{ concurrency: 1, queue: 1, queue_timeout: 20s }"))
        defer { proxy.finish() }
        let port = proxy.port
        let group = DispatchGroup()
        let statuses = Locked<[Int]>([])
        Self.send(group, port: port, tag: "long", seconds: 3, into: statuses)
        #expect(try Self.waitFor(proxy, inFlight: 1, waiting: 0))
        Self.send(group, port: port, tag: "next", seconds: 0.01, into: statuses)
        #expect(try Self.waitFor(proxy, inFlight: 1, waiting: 1))
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_queue_depth{route=\"api\"}"] == 1 && metrics["serializerd_upstream_slots_in_use{route=\"api\"}"] == 1)
        // The queue holds one: the next is refused at once.
        let full = try proxy.get("/api/gate?seconds=0.01&tag=over")
        #expect(full.status == 503 && full.header("Retry-After") == "1")
        #expect(proxy.json(full)?["type"] as? String == "urn:serializerd:overloaded")
        #expect((proxy.json(full)?["hint"] as? String ?? "").contains("limits.queue"), "\(full.text)")
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(statuses.current == [200, 200])
        #expect(try Self.stats(proxy).order == ["long", "next"])
        #expect(try Self.gate(proxy) == (0, 0))
    }

    @Test func aWaitPastQueueTimeoutIsOverloaded() throws {
        let proxy = try ProxyHarness(routes: Self.routes("{ concurrency: 1, queue: 5, queue_timeout: 300ms }"))
        defer { proxy.finish() }
        let port = proxy.port
        let group = DispatchGroup()
        let first = Locked<[Int]>([])
        Self.send(group, port: port, tag: "long", seconds: 3, into: first)
        #expect(try Self.waitFor(proxy, inFlight: 1, waiting: 0))
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_queue_depth{route=\"api\"}"] == 0 && metrics["serializerd_upstream_slots_in_use{route=\"api\"}"] == 1)
        let start = Date()
        let late = try proxy.get("/api/gate?seconds=0.01&tag=late")
        let waited = Date().timeIntervalSince(start)
        // Refused at its queue_timeout, well before the request ahead of it ended.
        #expect(late.status == 503 && late.header("Retry-After") == "1")
        #expect(waited >= 0.29 && waited < 2, "\(waited) s")
        #expect(late.text.contains("limits.queue_timeout: 300ms"), "\(late.text)")
        #expect(try Self.gate(proxy) == (1, 0))
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(first.current == [200])
        #expect(try Self.stats(proxy).order == ["long"])
        #expect(try Self.gate(proxy) == (0, 0))
    }

    @Test func cacheHitsNeverWait() throws {
        let proxy = try ProxyHarness(routes: Self.routes("{ concurrency: 1, queue: 0 }") + "    cache: { policy: prefer_cache }\n")
        defer { proxy.finish() }
        #expect(try proxy.get("/api/json").status == 200)
        let port = proxy.port
        let group = DispatchGroup()
        Self.send(group, port: port, tag: "busy", seconds: 1, into: Locked([]))
        #expect(try Self.waitFor(proxy, inFlight: 1, waiting: 0))
        // Every slot taken and no queue: the upstream is out of reach, the cache is not.
        #expect(try proxy.get("/api/json").status == 200)
        #expect(try proxy.get("/api/json?other").status == 503)
        #expect(group.wait(timeout: .now() + 20) == .success)
    }

    @Test func badLimitsAreConfigErrorsWithTheirPosition() throws {
        try expectCheckRefuses("limits", [
            ("{ queue: 5 }", "5:13: error: routes[0].limits: limits needs concurrency"),
            ("{ concurrency: 0 }", "5:28: error: routes[0].limits.concurrency: expected an integer from 1 to 100000"),
            ("{ concurrency: 2, queue_timeout: 0s }", "5:46: error: routes[0].limits.queue_timeout: expected a positive duration"),
            ("{ concurrency: 2, queue_timeout: 2h }", "routes[0].limits.queue_timeout: expected at most 1h, found '2h'"),
            ("{ concurrency: 2, queue: -1 }", "routes[0].limits.queue: expected an integer from 0 to 1000000"),
            ("{ rate: 10/h }", "5:21: error: routes[0].limits.rate: expected a rate such as 10/s or 600/m, found '10/h'"),
            ("{ rate: 0/s }", "routes[0].limits.rate: expected 1 to 100000 requests a period, found 0"),
            ("{ rate: ten/s }", "routes[0].limits.rate: expected a rate such as 10/s or 600/m"),
        ])
    }
}
