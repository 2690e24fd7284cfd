import Foundation
import TestSupport
import Testing

/// The daemon under a service manager: sd_notify states, the watchdog, socket
/// activation, the healthcheck command and config failures that must not restart-loop.
@Suite(.timeLimit(.minutes(5)))
struct ServiceManagerTests {
    @Test func notifiesReadyReloadingWatchdogAndStopping() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        // 0.4 s watchdog: the daemon pings every 0.2 s while its workers' heartbeats move.
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"),
                                     environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"])
        var finished = false
        defer { if !finished { proxy.finish() } }

        let ready = listener.wait { $0.hasPrefix("READY=1") }
        #expect(ready?.contains("STATUS=serving on 127.0.0.1:\(proxy.port)") == true)
        #expect(listener.wait { _ in listener.messages.filter { $0 == "WATCHDOG=1" }.count >= 3 } != nil)

        proxy.daemon.signal(SIGHUP)
        let reloading = listener.wait { $0.hasPrefix("RELOADING=1") }
        #expect(reloading?.contains("\nMONOTONIC_USEC=") == true)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        #expect(listener.wait { _ in listener.messages.filter { $0.hasPrefix("READY=1") }.count == 2 } != nil)
        // READY=1 after RELOADING=1, in that order.
        let states = listener.messages.filter { !$0.hasPrefix("WATCHDOG") }.map { $0.split(separator: "\n")[0] }
        #expect(states == ["READY=1", "RELOADING=1", "READY=1"])
        #expect(try proxy.get("/api/json").status == 200)

        finished = true
        #expect(proxy.finish() == 0)
        #expect(listener.messages.contains { $0.hasPrefix("STOPPING=1") })
    }

    @Test func servesOnASocketPassedBySocketActivation() throws {
        let launcher = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        try #require(FileManager.default.isExecutableFile(atPath: launcher.path), "systemd-socket-activate (Debian package systemd) is needed")
        // The config names a port another socket holds: serving at all proves the
        // daemon used the inherited descriptor instead of binding its own.
        let blocker = try LoopbackListener()
        defer { blocker.close() }
        let port = try LoopbackListener.freePort()
        let path = try writeConfig("listen: 127.0.0.1:\(blocker.port)\nworkers: 2\nroutes: []\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let daemon = try Spawned(launcher, ["-l", "127.0.0.1:\(port)", ServerBinary.url.path, "serve", "--config", path])
        defer { daemon.stop() }

        // The launcher execs the daemon on the first connection, which the daemon then serves.
        let health = try retrying { try RawHTTP.request(port: port, target: "/-/health", timeout: 10) }
        #expect(health.status == 200)
        #expect(health.text.contains("\"status\":\"ok\""))
        let ready = daemon.waitForLine { $0.contains("\"msg\":\"ready\"") }
        #expect(ready?.contains("\"listen\":\"127.0.0.1:\(port)\"") == true)
        #expect(try RawHTTP.request(port: port, target: "/-/health").status == 200)
        #expect(daemon.stop() == 0)
    }

    @Test(arguments: [
        ("exec 3</dev/null", "descriptor 3 is not a socket"),
        ("exec 3<&-", "descriptor 3 is not open"),
    ])
    func unusableInheritedSocketsFailWithAClearError(redirect: String, message: String) throws {
        let path = try writeConfig("listen: 127.0.0.1:0\nroutes: []\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = "\(redirect); export LISTEN_PID=$$; exec \"$0\" serve --config \"$1\""
        let result = try ServerBinary.run(["-c", script, ServerBinary.url.path, path], timeout: 10,
                                          executable: URL(fileURLWithPath: "/bin/sh"), environment: ["LISTEN_FDS": "1"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("LISTEN_FDS: \(message)"), "\(result.stderrText)")
        #expect(!result.stdoutText.contains("\"msg\":\"ready\""))
    }

    @Test func listenFDSThatIsNotACountIsRefused() throws {
        let path = try writeConfig("listen: 127.0.0.1:0\nroutes: []\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["-c", "export LISTEN_PID=$$; exec \"$0\" serve --config \"$1\"", ServerBinary.url.path, path],
                                          timeout: 10, executable: URL(fileURLWithPath: "/bin/sh"), environment: ["LISTEN_FDS": "two"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("LISTEN_FDS: expected the number of inherited listening sockets (1 or more), found 'two'"))
    }

    @Test func listenFDSForAnotherProcessIsIgnored() throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        // LISTEN_PID names some other process: the daemon binds its configured address.
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"),
                                     environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1", "NOTIFY_SOCKET": listener.path])
        defer { proxy.finish() }
        #expect(try proxy.get("/-/health").status == 200)
        #expect(listener.wait { $0.hasPrefix("READY=1") } != nil)
        #expect(!listener.messages.contains("WATCHDOG=1"))   // no WATCHDOG_USEC, no pings
    }

    @Test func healthcheckCommandReportsHealthyAndUnreachable() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let healthy = try ServerBinary.run(["healthcheck", "--url", "http://127.0.0.1:\(proxy.port)/-/health"])
        #expect(healthy.status == 0)
        #expect(healthy.stdoutText.contains("healthy"))
        // Without --url the address comes from the config (and SERIALIZERD_LISTEN beats it).
        let fromEnvironment = try ServerBinary.run(["healthcheck", "--config", "/nonexistent.yaml"],
                                                   environment: ["SERIALIZERD_LISTEN": "0.0.0.0:\(proxy.port)"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderrText)")
        let notHealth = try ServerBinary.run(["healthcheck", "--url", "http://127.0.0.1:\(proxy.port)/-/nothing"])
        #expect(notHealth.status == 1)
        #expect(notHealth.stderrText.contains("unhealthy: HTTP 404"))

        let closed = try LoopbackListener.freePort()
        let unreachable = try ServerBinary.run(["healthcheck", "--url", "http://127.0.0.1:\(closed)/-/health", "--timeout", "2"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderrText.contains("unreachable"))
    }

    @Test func healthcheckDefaultsToTheConfiguredListenAddress() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"))
        defer { proxy.finish() }
        let path = try writeConfig("listen: 0.0.0.0:\(proxy.port)\nroutes: []\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["healthcheck", "--config", path])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.hasPrefix("http://127.0.0.1:\(proxy.port)/-/health: healthy"))
    }

    @Test func invalidConfigExitsWithEXCONFIGAndThePosition() throws {
        let path = try writeConfig("listen: 127.0.0.1:0\nroutes:\n  - name: api\n    match: { prefix: /api/ }\n    upstream: ftp://example.test/\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["serve", "--config", path], timeout: 10)
        // 78 (EX_CONFIG) is what the unit's RestartPreventExitStatus= names.
        #expect(result.status == 78)
        #expect(result.stderrText.hasPrefix("\(path):5:15: error:"), "\(result.stderrText)")
        let missing = try ServerBinary.run(["serve", "--config", "/nonexistent/serializerd.yaml"], timeout: 10)
        #expect(missing.status == 78)
        #expect(missing.stderrText.contains("/nonexistent/serializerd.yaml: error: cannot read the configuration file (No such file or directory)"))
        // No --config, no SERIALIZERD_CONFIG and nothing on the search path: 78 as well.
        let nothing = try ServerBinary.run(["-c", "cd / && exec \"$0\" serve", ServerBinary.url.path], timeout: 10,
                                           executable: URL(fileURLWithPath: "/bin/sh"), environment: ["SERIALIZERD_CONFIG": ""])
        #expect(nothing.status == 78)
        #expect(nothing.stderrText.contains("no configuration file: pass --config PATH"), "\(nothing.stderrText)")
    }
}

private func writeConfig(_ yaml: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("serializerd-\(UUID().uuidString).yaml").path
    try yaml.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Retries while the launcher has not bound its socket yet (bounded: 5 s).
private func retrying<T>(_ body: () throws -> T) throws -> T {
    let deadline = Date().addingTimeInterval(5)
    while true {
        do { return try body() } catch {
            if Date() > deadline { throw error }
            usleep(50_000)
        }
    }
}

/// The service manager's end of NOTIFY_SOCKET: a datagram socket the test owns.
final class NotifyListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let received = Locked<[String]>([])
    private let open = Locked(true)
    private var reader: Thread?

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while open.current {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 { received.update { $0.append(String(decoding: buffer[..<count], as: UTF8.self)) } }
            }
        }
        thread.start()
        reader = thread
    }

    var messages: [String] { received.current }

    /// The first message satisfying `match`, waiting up to `timeout` seconds.
    func wait(timeout: TimeInterval = 10, _ match: @escaping (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = messages.first(where: match) { return found }
            usleep(20_000)
        }
        return nil
    }

    func close() {
        open.update { $0 = false }
        usleep(150_000)   // the reader wakes within its 100 ms receive timeout
        Glibc.close(fd)
        unlink(path)
    }
}

/// A listening TCP socket on 127.0.0.1 that the test holds.
final class LoopbackListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw TestFailure("cannot listen on loopback") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: actual.sin_port))
    }

    func close() { Glibc.close(fd) }

    /// A port nobody listens on right now.
    static func freePort() throws -> Int {
        let listener = try LoopbackListener()
        listener.close()
        return listener.port
    }
}
