import Foundation
import TestSupport
import Testing

/// A route answers only requests whose `Host` names this daemon (DESIGN §4): a page whose
/// DNS name was re-pointed at 127.0.0.1 cannot borrow a route's credentials.
@Suite(.timeLimit(.minutes(5)))
struct HostRuleTests {
    static let routes = """
          - name: github
            match: { prefix: /github/ }
            upstream: {stub}
            headers: { Authorization: "Bearer s3cret-token" }
          - name: faulty
            match: { prefix: /faulty/ }
            upstream: {stub}
            network: { header_control: true }
          - name: legacy
            match: { host: api.example.test, prefix: / }
            upstream: {stub}

        """

    @Test func aRebindingPageGets421AndTheUpstreamIsNeverAsked() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "hosts: [dev.example.test]\n")
        defer { proxy.finish() }
        for host in ["evil.example", "evil.example:\(proxy.port)", "EVIL.example.", "localhost.evil.example", "127.0.0.1.evil.example",
                     "xlocalhost", "api.example.test"] {
            let reply = try proxy.get("/github/echo", host: host)
            #expect(reply.status == 421, "\(host)")
            #expect(proxy.json(reply)?["type"] as? String == "urn:serializerd:misdirected-request", "\(host)")
            #expect(!reply.text.contains("s3cret"), "\(host)")
            #expect((proxy.json(reply)?["detail"] as? String)?.contains("hosts") == true, "\(host)")
            // Whatever the path: a page learns nothing of which paths are routes.
            #expect(try proxy.get("/nowhere", host: host).status == 421, "\(host)")
            // Fault headers on a header_control route are not reachable either.
            let steered = try proxy.get("/faulty/json", headers: [("Serializerd-Fault", "status=503")], host: host)
            #expect(steered.status == 421, "\(host)")
        }
        let events = proxy.json(try proxy.get("/-/recent"))?["events"] as? [[String: Any]] ?? []
        #expect(!events.contains { ($0["upstream_status"] as? Int) != nil }, "no request went upstream")
        // Names that only this machine can mean, and the configured one, are answered.
        for host in ["127.0.0.1:\(proxy.port)", "127.0.0.1", "localhost", "LOCALHOST.:\(proxy.port)", "app.localhost",
                     "[::1]:\(proxy.port)", "10.1.2.3", "dev.example.test", "Dev.Example.Test.:1"] {
            let reply = try proxy.get("/github/echo", host: host)
            #expect(reply.status == 200, "\(host): \(reply.text)")
            #expect(reply.text.contains("s3cret"), "\(host)")
        }
        // An absolute-form request is matched by its URL's host, as before.
        let absolute = try proxy.get("http://api.example.test/v1/json", host: "api.example.test")
        #expect(absolute.status == 200, "\(absolute.text)")
    }

    @Test func hostsIsCheckedAtLoadWithItsPosition() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hosts-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "listen: 127.0.0.1:0\nhosts: [ok.example, \"bad host\", \"x.example:80\"]\nroutes: []\n".write(toFile: path, atomically: true, encoding: .utf8)
        let check = try ServerBinary.run(["check", "--config", path])
        #expect(check.status == 1)
        #expect(check.stderrText.contains("\(path):2:21: error: hosts[1]"), "\(check.stderrText)")
        #expect(check.stderrText.contains("found 'bad host'"), "\(check.stderrText)")
    }
}
