import Foundation
import TestSupport
import Testing

/// Listening sockets and the process around them: a taken address, a Unix socket, and
/// signals sent the moment the daemon reports ready.
@Suite(.timeLimit(.minutes(5)))
struct ListenerTests {
    @Test func aSecondServeOnATakenAddressExitsWithAClearError() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let yaml = try String(contentsOfFile: proxy.configPath, encoding: .utf8)
            .replacingOccurrences(of: "listen: 127.0.0.1:0", with: "listen: 127.0.0.1:\(proxy.port)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("taken-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let second = try ServerBinary.run(["serve", "--config", path], timeout: 20)
        #expect(second.status == 1)
        #expect(second.stderrText.contains("bind 127.0.0.1:\(proxy.port): address already in use"), "\(second.stderrText)")
        // The first daemon still has all the traffic.
        for _ in 0..<20 { #expect(try proxy.get("/api/json").status == 200) }
    }

    @Test func servesOnAUnixSocketThatCountsAsLoopbackAndIsRemovedOnExit() throws {
        let (stub, socketPath, config) = try Self.unixSetup()
        defer { stub.stop(); try? FileManager.default.removeItem(atPath: config) }
        let daemon = try Spawned(ServerBinary.url, ["serve", "--config", config])
        #expect(daemon.waitForLine { $0.contains("\"msg\":\"ready\"") && $0.contains("unix:\(socketPath)") } != nil, "\(daemon.text)")
        let attributes = try FileManager.default.attributesOfItem(atPath: socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o660)
        let curl = { (path: String) throws -> CommandResult in try Self.curl(socketPath, path) }
        // A Unix-socket peer counts as loopback: the default admin.allow admits it.
        #expect(try curl("/-/health").stdoutText.hasSuffix("\n200"))
        #expect(try curl("/api/json").stdoutText == "{\"a\":[1,2.50,null],\"b\":\"x/y\"}\n200")
        let health = try ServerBinary.run(["healthcheck", "--config", config])
        #expect(health.status == 0, "\(health.stderrText)")
        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    static func unixConfig(_ socketPath: String, stubPort: Int) throws -> String {
        let yaml = """
            listen: unix:\(socketPath)
            workers: 2
            routes:
              - name: api
                match: { prefix: /api/ }
                upstream: http://127.0.0.1:\(stubPort)/v1

            """
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("unix-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: config, atomically: true, encoding: .utf8)
        return config
    }

    /// A stub upstream and a config for a daemon on a fresh Unix socket path.
    static func unixSetup() throws -> (stub: Spawned, socketPath: String, config: String) {
        let (stub, stubPort) = try StubUpstream.start()
        let socketPath = "/tmp/serializerd-test-\(UInt32.random(in: 0...UInt32.max)).sock"
        return (stub, socketPath, try unixConfig(socketPath, stubPort: stubPort))
    }

    static func curl(_ socketPath: String, _ path: String, headers: [String] = []) throws -> CommandResult {
        try ServerBinary.run(["-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket", socketPath] + headers.flatMap { ["-H", $0] }
                             + ["http://localhost\(path)"], executable: URL(fileURLWithPath: "/usr/bin/curl"))
    }

    @Test func aFileThatIsNotASocketIsNeverReplaced() throws {
        let (stub, stubPort) = try StubUpstream.start()
        defer { stub.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("unix-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A regular file named like a socket, and a directory: both stay as they are.
        let file = dir + "/http.sock"
        try "precious data\n".write(toFile: file, atomically: false, encoding: .utf8)
        let directory = dir + "/dir.sock"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for path in [file, directory] {
            let config = try Self.unixConfig(path, stubPort: stubPort)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let run = try ServerBinary.run(["serve", "--config", config], timeout: 20)
            #expect(run.status == 1)
            #expect(run.stderrText.contains("listen unix:\(path): exists and is not a socket"), "\(run.stderrText)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "precious data\n")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test func aSuccessorsSocketOnTheSamePathSurvivesTheFirstDaemonsExit() throws {
        let (stub, socketPath, config) = try Self.unixSetup()
        defer { stub.stop(); try? FileManager.default.removeItem(atPath: config) }
        let first = try Spawned(ServerBinary.url, ["serve", "--config", config])
        #expect(first.waitForLine { $0.contains("\"msg\":\"ready\"") } != nil, "\(first.text)")
        // The path is taken over (as by a successor started while the first drains): the
        // first daemon's file goes, the successor binds its own at the same path.
        unlink(socketPath)
        let second = try Spawned(ServerBinary.url, ["serve", "--config", config])
        defer { second.stop() }
        #expect(second.waitForLine { $0.contains("\"msg\":\"ready\"") } != nil, "\(second.text)")
        #expect(first.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: socketPath))
        #expect(try Self.curl(socketPath, "/api/json").stdoutText.hasSuffix("\n200"))
        #expect(second.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func aUnixClientGetsNoMadeUpForwardedFor() throws {
        let (stub, socketPath, config) = try Self.unixSetup()
        defer { stub.stop(); try? FileManager.default.removeItem(atPath: config) }
        let daemon = try Spawned(ServerBinary.url, ["serve", "--config", config])
        defer { daemon.stop() }
        #expect(daemon.waitForLine { $0.contains("\"msg\":\"ready\"") } != nil, "\(daemon.text)")
        let plain = try Self.curl(socketPath, "/api/echo").stdoutText
        #expect(plain.hasSuffix("\n200") && !plain.contains("x-forwarded-for") && plain.contains("\"via\""), "\(plain)")
        // A front end's own chain goes on untouched.
        let chained = try Self.curl(socketPath, "/api/echo", headers: ["X-Forwarded-For: 192.0.2.7"]).stdoutText
        #expect(chained.contains("\"x-forwarded-for\":\"192.0.2.7\""), "\(chained)")
        // Any Host over a Unix socket: it is on this host already.
        #expect(try Self.curl(socketPath, "/-/health", headers: ["Host: evil.example"]).stdoutText.hasSuffix("\n200"))
    }

    @Test func sighupTheMomentReadyIsLoggedNeverKillsTheDaemon() throws {
        let (stub, stubPort) = try StubUpstream.start()
        defer { stub.stop() }
        let yaml = "listen: 127.0.0.1:0\nworkers: 2\nroutes:\n"
            + route("api", prefix: "/api/").replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(stubPort)/v1")
        for attempt in 0..<30 {
            let (daemon, port, path) = try DaemonUnderTest.start(config: yaml)
            daemon.signal(SIGHUP)
            #expect(daemon.waitForLine(timeout: 10) { $0.contains("\"msg\":\"config_reloaded\"") } != nil, "attempt \(attempt): \(daemon.text)")
            #expect(try RawHTTP.request(port: port, target: "/api/json").status == 200)
            #expect(daemon.stop() == 0, "attempt \(attempt)")
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
