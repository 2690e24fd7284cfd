import Foundation
import TestSupport

/// A running stub upstream and a running serializerd in front of it, stopped by `finish`.
final class ProxyHarness {
    let stub: Spawned
    let stubPort: Int
    let daemon: Spawned
    let port: Int
    let configPath: String

    /// `routes` is YAML for the `routes:` list; `{stub}` becomes the stub's base URL.
    init(routes: String, top: String = "", workers: Int = 2, environment: [String: String]? = nil) throws {
        (stub, stubPort) = try StubUpstream.start()
        let yaml = "listen: 127.0.0.1:0\nworkers: \(workers)\n" + top + "routes:\n"
            + routes.replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(stubPort)/v1")
        do {
            (daemon, port, configPath) = try DaemonUnderTest.start(config: yaml, environment: environment)
        } catch {
            stub.stop()
            throw error
        }
    }

    func get(_ target: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = []) throws -> RawResponse {
        try RawHTTP.request(port: port, method: method, target: target, headers: headers, body: body)
    }

    func json(_ response: RawResponse) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
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
