import Foundation
import TestSupport
import Testing

/// The daemon under pressure: slowloris clients with few descriptors, the connection
/// cap with busy connections, and slow readers against the buffer budget.
@Suite(.timeLimit(.minutes(5)))
struct PressureTests {
    /// serializerd under `ulimit -n nofile`, in front of a fresh stub.
    final class Limited {
        let stub: Spawned
        let daemon: Spawned
        let port: Int
        let configPath: String

        init(top: String, nofile: Int, workers: Int = 1) throws {
            let stubPort: Int
            (stub, stubPort) = try StubUpstream.start()
            configPath = FileManager.default.temporaryDirectory.appendingPathComponent("pressure-\(UUID().uuidString).yaml").path
            let yaml = "listen: 127.0.0.1:0\nworkers: \(workers)\n" + top + "routes:\n"
                + route("api", prefix: "/api/").replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(stubPort)/v1")
            try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
            daemon = try Spawned(URL(fileURLWithPath: "/bin/sh"),
                                 ["-c", "ulimit -n \(nofile) && exec \"$0\" serve --config \"$1\"", ServerBinary.url.path, configPath])
            guard let line = daemon.waitForLine({ $0.contains("\"msg\":\"ready\"") }),
                  let range = line.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression) else {
                stub.stop()
                throw TestFailure("serializerd did not become ready: \(daemon.text)")
            }
            port = Int(line[range].split(separator: ":").last!)!
        }

        func finish() {
            daemon.stop()
            stub.stop()
            try? FileManager.default.removeItem(atPath: configPath)
        }

        /// CPU seconds the daemon has used (user + system).
        var cpuSeconds: Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / 100
        }

        func metric(_ name: String) throws -> Double? {
            Metrics(try RawHTTP.request(port: port, target: "/metrics").text)[name]
        }
    }

    @Test func slowlorisWithFewDescriptorsNeverKeepsANormalClientOut() throws {
        // 200 descriptors carry (200 - 64) / 2 = 68 connections; 300 attackers.
        let proxy = try Limited(top: "timeouts: { client_idle: 3s }\n", nofile: 200)
        defer { proxy.finish() }
        #expect(proxy.daemon.text.contains("\"msg\":\"max_connections_lowered\""))
        var attackers: [RawConnection] = []
        for _ in 0..<300 {
            let connection = try RawConnection(port: proxy.port)
            connection.send("GET /api/json HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            attackers.append(connection)
        }
        let cpuBefore = proxy.cpuSeconds
        let started = Date()
        // Normal clients keep being answered promptly while the attackers trickle on.
        for probe in 0..<5 {
            for attacker in attackers { attacker.send("a") }
            let asked = Date()
            let reply = try RawHTTP.request(port: proxy.port, target: "/api/json", timeout: 5)
            #expect(reply.status == 200, "probe \(probe)")
            #expect(Date().timeIntervalSince(asked) < 1, "probe \(probe) took \(Date().timeIntervalSince(asked)) s")
            usleep(500_000)
        }
        let cpu = proxy.cpuSeconds - cpuBefore
        #expect(cpu < 0.5 * Date().timeIntervalSince(started), "the daemon used \(cpu) s of CPU")
    }

    @Test func outOfDescriptorsAcceptingPausesWithoutSpinningAndEveryClientIsAnswered() throws {
        let proxy = try Limited(top: "", nofile: 1024)
        defer { proxy.finish() }
        // The limit drops under the running daemon: its connection cap no longer protects
        // it, and accept(2) meets EMFILE.
        let lowered = Process()
        lowered.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        lowered.arguments = ["--pid", "\(proxy.daemon.process.processIdentifier)", "--nofile=48:48"]
        try lowered.run()
        lowered.waitUntilExit()
        let port = proxy.port
        let statuses = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let clients = 40
        for _ in 0..<clients {
            Thread {
                let status = (try? RawHTTP.request(port: port, target: "/api/slow?seconds=1", timeout: 30))?.status ?? -1
                statuses.update { $0.append(status) }
                done.signal()
            }.start()
        }
        usleep(500_000)
        // Every busy connection holds its descriptors: nothing to close, so accepting waits.
        let cpuBefore = proxy.cpuSeconds
        usleep(1_000_000)
        let cpu = proxy.cpuSeconds - cpuBefore
        for _ in 0..<clients { done.wait() }
        // Everyone got an answer: served, or a clear 502 where the upstream socket could not be had.
        #expect(statuses.current.count == clients)
        #expect(statuses.current.allSatisfy { $0 == 200 || $0 == 502 }, "\(statuses.current)")
        #expect(statuses.current.contains(200))
        #expect(cpu < 0.3, "the daemon used \(cpu) s of CPU in 1 s while out of descriptors")
        let pauses = proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"msg\":\"accept_paused\"") }
        // Whether accept(2) or libcurl's socket(2) meets EMFILE first depends on timing; when
        // accepting pauses, it says so once per episode, never once per attempt.
        #expect(pauses.count <= 4, "\(pauses.count) accept_paused lines")
        #expect(pauses.allSatisfy { $0.contains("no file descriptors left") })
        #expect(!proxy.daemon.text.contains("[warn]"))
    }

    @Test func atTheCapWithBusyConnectionsAcceptingPausesAndResumes() throws {
        let proxy = try Limited(top: "limits: { max_connections: 2 }\n", nofile: 1024)
        defer { proxy.finish() }
        let port = proxy.port
        let results = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                let status = (try? RawHTTP.request(port: port, target: "/api/slow?seconds=1"))?.status ?? -1
                results.update { $0.append(status) }
                done.signal()
            }.start()
        }
        usleep(400_000)
        // Both slots are busy and none waits for its client: this one waits in the backlog.
        let asked = Date()
        let third = try RawHTTP.request(port: port, target: "/api/json", timeout: 10)
        #expect(third.status == 200)
        #expect(Date().timeIntervalSince(asked) > 0.3, "served at once: the cap did not hold")
        done.wait()
        done.wait()
        #expect(results.current == [200, 200])
        #expect(try proxy.metric("serializerd_accept_pauses_total{reason=\"max_connections\"}") ?? 0 >= 1)
        let pauses = proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"msg\":\"accept_paused\"") }
        #expect(pauses.count >= 1 && pauses.count <= 3, "\(proxy.daemon.text)")
    }

    @Test func slowReadersAreHeldToTheBufferBudgetAndTheRestAreToldToRetry() throws {
        let proxy = try Limited(top: "limits: { max_buffered_bytes: 24MiB }\n", nofile: 1024, workers: 2)
        defer { proxy.finish() }
        var readers: [RawConnection] = []
        for k in 0..<8 {
            let connection = try RawConnection(port: proxy.port, receiveBuffer: 4096)
            connection.send("GET /api/big?bytes=8000000 HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: reader-\(k)\r\n\r\n")
            readers.append(connection)
            usleep(100_000)
        }
        // Some replies are held for their readers; the rest were refused at once.
        let refused = { proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"outcome\":\"overloaded\"") } }
        for _ in 0..<100 where refused().isEmpty { usleep(20_000) }
        #expect(refused().count >= 1)
        #expect(refused().allSatisfy { $0.contains("\"status\":503") })
        let buffered = try proxy.metric("serializerd_buffered_bytes") ?? -1
        #expect(buffered > 0 && buffered <= Double(24 << 20) + 8_100_000, "\(buffered)")
        let fresh = try RawHTTP.request(port: proxy.port, target: "/api/big?bytes=8000000")
        #expect(fresh.status == 503 && fresh.header("Retry-After") == "1", "\(fresh.status)")
        // When the readers go, their bytes go with them.
        readers.removeAll()
        var after = try proxy.metric("serializerd_buffered_bytes") ?? -1
        for _ in 0..<100 where after != 0 {
            usleep(20_000)
            after = try proxy.metric("serializerd_buffered_bytes") ?? -1
        }
        #expect(after == 0)
        #expect(try RawHTTP.request(port: proxy.port, target: "/api/json").status == 200)
    }
}
