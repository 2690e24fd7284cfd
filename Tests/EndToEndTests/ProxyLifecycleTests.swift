import Foundation
import TestSupport
import Testing

/// Reload, drain and load: the daemon as a process.
@Suite(.timeLimit(.minutes(5)))
struct ProxyLifecycleTests {
    @Test func sighupSwapsRoutesAndKeepsTheOldConfigOnError() throws {
        let proxy = try ProxyHarness(routes: route("old", prefix: "/old/"))
        defer { proxy.finish() }
        #expect(try proxy.get("/old/json").status == 200)
        #expect(try proxy.get("/new/json").status == 404)

        let base = "listen: 127.0.0.1:0\nworkers: 2\nlimits: { max_request_body: 1KiB }\nroutes:\n"
        let newRoutes = route("new", prefix: "/new/").replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(proxy.stubPort)/v1")
        try (base + newRoutes).write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        #expect(try proxy.get("/new/json").status == 200)
        #expect(try proxy.get("/old/json").status == 404)
        // The new limits too, answered with a problem document at any size.
        let over = try proxy.get("/new/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 1500))
        #expect(over.status == 413 && proxy.json(over)?["type"] as? String == "urn:serializerd:request-too-large")
        let wayOver = try proxy.get("/new/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 30000))
        #expect(wayOver.status == 413 && proxy.json(wayOver)?["type"] as? String == "urn:serializerd:request-too-large")

        try "routes:\n  - name: Broken Name\n".write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        let failed = proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reload_failed\"") }
        #expect(failed?.contains("route names use a-z") == true)
        #expect(try proxy.get("/new/json").status == 200)
    }

    @Test func reloadUnderLoadLosesNoRequest() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let port = proxy.port
        let daemon = proxy.daemon
        let reloading = Locked(true)
        let signalled = Locked<[Date]>([])
        let reloads: @Sendable () -> Int = { daemon.text.components(separatedBy: "\"msg\":\"config_reloaded\"").count - 1 }
        // Each request's start and end, to show that every SIGHUP landed under load.
        let spans = Locked<[(Date, Date, Int)]>([])
        let reloader = Thread {
            for reload in 0..<5 {
                // The next SIGHUP once the last is applied and requests have gone on meanwhile.
                let deadline = Date().addingTimeInterval(10)
                while Date() < deadline && (spans.current.count < 8 * (reload + 1) || reloads() < reload) { usleep(5_000) }
                signalled.update { $0.append(Date()) }
                daemon.signal(SIGHUP)
            }
            let after = spans.current.count
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && spans.current.count < after + 16 { usleep(5_000) }
            reloading.update { $0 = false }
        }
        reloader.start()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while reloading.current {
                let started = Date()
                let status = (try? RawHTTP.request(port: port, target: "/api/json", timeout: 10).status) ?? -1
                spans.update { $0.append((started, Date(), status)) }
            }
        }
        let all = spans.current
        #expect(all.allSatisfy { $0.2 == 200 }, "\(Dictionary(grouping: all.map(\.2), by: { $0 }).mapValues(\.count))")
        // Requests were answered after every reload, not only before the first.
        for time in signalled.current {
            #expect(all.contains { $0.0 > time }, "no request started after the SIGHUP at \(time)")
        }
        #expect(daemon.waitForLine { _ in reloads() == 5 } != nil)
    }

    @Test func sigtermFinishesRequestsInFlightThenExitsZero() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "timeouts: { shutdown_grace: 5s }\n")
        let slow = proxy.inBackground("/api/slow?seconds=2", timeout: 10)
        #expect(proxy.waitForInflight())
        proxy.daemon.signal(SIGTERM)
        let exit = proxy.daemon.waitForExit(timeout: 10)
        proxy.finish()
        #expect(slow.reply()?.status == 200)
        #expect(exit == 0)
        #expect(proxy.daemon.text.contains("\"msg\":\"stopped\""))
    }

    @Test func graceExpiryAnswers503() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "timeouts: { shutdown_grace: 300ms }\n")
        let request = proxy.inBackground("/api/slow?seconds=4", timeout: 10)
        #expect(proxy.waitForInflight())
        proxy.daemon.signal(SIGTERM)
        #expect(proxy.daemon.waitForExit(timeout: 10) == 0)
        proxy.finish()
        let slow = request.reply()
        #expect(slow?.status == 503)
        #expect(slow.map { String(decoding: $0.body, as: UTF8.self).contains("urn:serializerd:unavailable") } == true)
    }

    @Test func everyRequestGetsExactlyOneReplyUnderConcurrency() throws {
        let proxy = try ProxyHarness(routes: [route("api", prefix: "/api/"), route("slow", prefix: "/slow/", extra: "    timeout: 200ms\n")].joined())
        defer { proxy.finish() }
        let port = proxy.port
        // A mix of successes, upstream failures and local failures, 8 clients at once.
        let targets = ["/api/json", "/api/json?status=500", "/nowhere", "/slow/slow?seconds=1", "/api/garbage", "/api/%2e%2e/x"]
        let collected = Locked<[String: [Int]]>([:])
        let extraBytes = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for k in 0..<30 {
                let target = targets[(worker + k) % targets.count]
                // Read until the daemon closes: a second reply would follow the first.
                let reply = try? RawHTTP.requestReadingToClose(port: port, target: target, timeout: 10)
                collected.update { $0[target, default: []].append(reply?.0.status ?? -1) }
                extraBytes.update { $0 += reply?.extra ?? 0 }
            }
        }
        let replies = collected.current
        #expect(replies.values.map(\.count).reduce(0, +) == 240)
        #expect(extraBytes.current == 0, "bytes after a reply: a request was answered twice")
        #expect(replies["/api/json"]!.allSatisfy { $0 == 200 })
        #expect(replies["/api/json?status=500"]!.allSatisfy { $0 == 500 })
        #expect(replies["/nowhere"]!.allSatisfy { $0 == 404 })
        #expect(replies["/slow/slow?seconds=1"]!.allSatisfy { $0 == 504 })
        #expect(replies["/api/garbage"]!.allSatisfy { $0 == 502 })
        #expect(replies["/api/%2e%2e/x"]!.allSatisfy { $0 == 400 })
        // Still serving afterwards.
        #expect(try proxy.get("/api/json").status == 200)
    }
}
