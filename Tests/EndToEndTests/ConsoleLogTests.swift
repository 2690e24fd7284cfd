import Foundation
import TestSupport
import Testing

/// `log.format: auto` (the default): readable, aligned, coloured request lines for a
/// person at a terminal; JSON lines for everything else.
@Suite(.timeLimit(.minutes(5)))
struct ConsoleLogTests {
    @Test func aTerminalGetsOneColouredLinePerRequestAndProbesStayQuiet() throws {
        let (stub, stubPort) = try StubUpstream.start()
        defer { stub.stop() }
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--upstream", "http://127.0.0.1:\(stubPort)/v1",
                                                                   "--listen", "127.0.0.1:0"], onATerminal: true)
        defer { daemon.stop() }
        #expect(try RawHTTP.request(port: port, target: "/-/health").status == 200)
        #expect(try RawHTTP.request(port: port, target: "/metrics").status == 200)
        #expect(try RawHTTP.request(port: port, target: "/json").status == 200)
        #expect(try RawHTTP.request(port: port, target: "/json?type=text/html").status == 502)
        let ok = try #require(daemon.waitForLine { $0.contains(" /json ") && $0.contains("200") })
        // HH:MM:SS.mmm, method padded to 7, path to 32, status and outcome in green.
        #expect(ok.range(of: #"^\d\d:\d\d:\d\d\.\d{3}  GET     /json {28}\x{1B}\[32m200 ok {22}\x{1B}\[0m +\d+\.\d ms  \(upstream \d+\.\d ms, serialize \d+\.\d ms\)  default"#,
                         options: .regularExpression) != nil, "\(ok.debugDescription)")
        let failed = try #require(daemon.waitForLine { $0.contains("unacceptable_content_type") })
        #expect(failed.contains("\u{1B}[31m502 unacceptable_content_type") && failed.hasSuffix("\u{1B}[2mRequest failed: unacceptable content-type: text/html\u{1B}[0m"), "\(failed.debugDescription)")
        // Health checks and scrapes are debug: not at the default level.
        #expect(!daemon.text.contains("/-/health") && !daemon.text.contains("/metrics"), "\(daemon.text)")
        #expect(!daemon.text.contains("{\"ts\""))
    }

    @Test func aPipeGetsJSONLinesAndDebugShowsTheProbes() throws {
        let (stub, stubPort) = try StubUpstream.start()
        defer { stub.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("debug-\(UUID().uuidString).yaml").path
        try "listen: 127.0.0.1:0\nlog: { level: debug }\nroutes:\n  - name: api\n    match: { prefix: / }\n    upstream: http://127.0.0.1:\(stubPort)/v1\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--config", path])
        defer { daemon.stop() }
        #expect(try RawHTTP.request(port: port, target: "/-/health").status == 200)
        let probe = try #require(daemon.waitForLine { $0.contains("\"path\":\"/-/health\"") })
        #expect(probe.hasPrefix("{\"ts\":") && probe.contains("\"level\":\"debug\""))
    }
}
