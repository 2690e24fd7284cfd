import Foundation
import Testing
import TestSupport

/// A running stub upstream and a running serializerd in front of it, stopped by `finish`.
final class ProxyHarness {
    let stub: Spawned
    let stubPort: Int
    let daemon: Spawned
    let port: Int
    let configPath: String

    /// `routes` is YAML for the `routes:` list; `{stub}` becomes the stub's base URL.
    init(routes: String, top: String = "", workers: Int = 2, environment: [String: String]? = nil,
         script: String = "stub_upstream.py", arguments: [String] = [], scheme: String = "http") throws {
        (stub, stubPort) = try StubUpstream.start(arguments, script: script)
        let yaml = "listen: 127.0.0.1:0\nworkers: \(workers)\n" + top + "routes:\n"
            + routes.replacingOccurrences(of: "{stub}", with: "\(scheme)://127.0.0.1:\(stubPort)/v1")
        do {
            (daemon, port, configPath) = try DaemonUnderTest.start(config: yaml, environment: environment)
        } catch {
            stub.stop()
            throw error
        }
    }

    func get(_ target: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = [],
             host: String? = nil) throws -> RawResponse {
        try RawHTTP.request(port: port, method: method, target: target, headers: headers, body: body, host: host)
    }

    func json(_ response: RawResponse) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
    }

    /// Polls `/metrics` until `serializerd_inflight_requests` is at least `count` (a request
    /// has reached the daemon and not been answered); false at the deadline. Each scrape
    /// gives up quickly: a worker busy serializing answers nothing until it is done.
    func waitForInflight(atLeast count: Int = 1, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let scrape = try? RawHTTP.request(port: port, target: "/metrics", timeout: 0.3),
               let value = Metrics(scrape.text)["serializerd_inflight_requests"], value >= Double(count) {
                return true
            }
            usleep(10_000)
        }
        return false
    }

    /// One request on its own thread (the test meanwhile signals or polls); `reply`
    /// waits, bounded, for its answer.
    final class BackgroundRequest: Sendable {
        private let answer = Locked<RawResponse??>(nil)

        init(port: Int, target: String, timeout: Double) {
            let answer = answer
            Thread { answer.update { $0 = .some(try? RawHTTP.request(port: port, target: target, timeout: timeout)) } }.start()
        }

        /// The reply, nil when the request failed or did not finish within `timeout`.
        func reply(timeout: Double = 10) -> RawResponse? {
            let deadline = Date().addingTimeInterval(timeout)
            while answer.current == nil && Date() < deadline { usleep(10_000) }
            return answer.current ?? nil
        }
    }

    func inBackground(_ target: String, timeout: Double = 20) -> BackgroundRequest {
        BackgroundRequest(port: port, target: target, timeout: timeout)
    }

    /// Stops both; returns the daemon's exit status (0 after a clean drain).
    @discardableResult
    func finish() -> Int32 {
        let status = daemon.stop()
        stub.stop()
        try? FileManager.default.removeItem(atPath: configPath)
        return status
    }
}

func route(_ name: String, prefix: String, scenario: String = "", extra: String = "") -> String {
    "  - name: \(name)\n    match: { prefix: \(prefix) }\n    upstream: {stub}\(scenario)\n" + extra
}

/// `serializerd check` refuses a route whose `key` is each `value`, saying `message`
/// (which may begin with the `line:col` of the value, on line 5).
func expectCheckRefuses(_ key: String, _ cases: [(value: String, message: String)], sourceLocation: SourceLocation = #_sourceLocation) throws {
    for (value, message) in cases {
        let result = try checkRoute(key, value)
        let output = result.stdoutText + result.stderrText
        #expect(result.status != 0 && output.contains(message), "\(value): \(output)", sourceLocation: sourceLocation)
    }
}

/// `serializerd check` on a config of one route `api` to `upstream` whose fifth line is
/// `key: value` (so its errors point at line 5).
func checkRoute(_ key: String, _ value: String, upstream: String = "http://127.0.0.1:9/") throws -> CommandResult {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).yaml").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    try "routes:\n  - name: api\n    match: { prefix: /api/ }\n    upstream: \(upstream)\n    \(key): \(value)\n"
        .write(toFile: file, atomically: true, encoding: .utf8)
    return try ServerBinary.run(["check", file])
}
