import Foundation
import TestSupport
import Testing

/// Reload, drain and load: the daemon as a process.
@Suite(.timeLimit(.minutes(2)))
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
        let reloader = Thread {
            for _ in 0..<5 {
                usleep(50_000)
                daemon.signal(SIGHUP)
            }
            usleep(50_000)
            reloading.update { $0 = false }
        }
        // Clients keep going until the reloads are over, so every SIGHUP lands under load.
        let statuses = Locked<[Int]>([])
        reloader.start()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            while reloading.current {
                let status = (try? RawHTTP.request(port: port, target: "/api/json", timeout: 10).status) ?? -1
                statuses.update { $0.append(status) }
            }
        }
        let all = statuses.current
        #expect(all.count >= 8)   // each client ran at least once while reloads were in progress
        #expect(all.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: all, by: { $0 }).mapValues(\.count))")
        #expect(daemon.waitForLine { _ in daemon.text.components(separatedBy: "\"msg\":\"config_reloaded\"").count - 1 == 5 } != nil)
    }

    @Test func sigtermFinishesRequestsInFlightThenExitsZero() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "timeouts: { shutdown_grace: 5s }\n")
        let port = proxy.port
        let slowStatus = Locked(0)
        let client = Thread {
            let status = (try? RawHTTP.request(port: port, target: "/api/slow?seconds=2", timeout: 10).status) ?? -1
            slowStatus.update { $0 = status }
        }
        client.start()
        // Long enough for the request to reach the daemon even on a loaded machine.
        usleep(700_000)
        proxy.daemon.signal(SIGTERM)
        let exit = proxy.daemon.waitForExit(timeout: 10)
        proxy.finish()
        usleep(100_000)
        #expect(slowStatus.current == 200)
        #expect(exit == 0)
        #expect(proxy.daemon.text.contains("\"msg\":\"stopped\""))
    }

    @Test func graceExpiryAnswers503() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "timeouts: { shutdown_grace: 300ms }\n")
        let port = proxy.port
        let slowReply = Locked<RawResponse?>(nil)
        let client = Thread {
            let response = try? RawHTTP.request(port: port, target: "/api/slow?seconds=4", timeout: 10)
            slowReply.update { $0 = response }
        }
        client.start()
        usleep(700_000)
        proxy.daemon.signal(SIGTERM)
        #expect(proxy.daemon.waitForExit(timeout: 10) == 0)
        proxy.finish()
        usleep(100_000)
        let slow = slowReply.current
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
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for k in 0..<30 {
                let target = targets[(worker + k) % targets.count]
                let status = (try? RawHTTP.request(port: port, target: target, timeout: 10).status) ?? -1
                collected.update { $0[target, default: []].append(status) }
            }
        }
        let replies = collected.current
        #expect(replies.values.map(\.count).reduce(0, +) == 240)
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
