import Foundation
import TestSupport
import Testing

/// Mocks (DESIGN §2 `mocks:`): answers in the upstream's format, tried in order before the
/// tape and the upstream, read by the route's serializer like any upstream answer.
@Suite(.timeLimit(.minutes(3)))
struct MockTests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mocks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/fixtures/deep", withIntermediateDirectories: true)
        return path
    }

    @Test func rulesAnswerInOrderThroughTheSerializerAndMapDirStaysInside() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(#"<?xml version="1.0"?><refund><id>7</id><amount>12.50</amount></refund>"#.utf8).write(to: URL(fileURLWithPath: dir + "/refund.xml"))
        try Data(#"{"fixture":true,"n":1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/fixtures/a.json"))
        try Data(#"{"deep":1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/fixtures/deep/b.json"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: dir + "/outside.json"))
        try FileManager.default.createSymbolicLink(atPath: dir + "/fixtures/link.json", withDestinationPath: dir + "/outside.json")
        let routes = """
              - name: api
                match: { prefix: /api/ }
                upstream: {stub}
                mocks:
                  - name: tenant
                    when: { method: GET, path: "refunds/*", header: { X-Tenant: beta } }
                    respond: { status: 202, json: { tenant: beta, ok: true, n: 3, none: null } }
                  - name: refund
                    when: { method: GET, path: "refunds/*" }
                    respond: { headers: { Content-Type: application/xml }, file: \(dir)/refund.xml }
                  - name: anywhere
                    when: { path: "deep/**", query: { v: "2" } }
                    respond: { status: 200, headers: { Content-Type: text/html }, body: "<html>not json</html>" }
                  - map_dir: \(dir)/fixtures
              - name: feed
                match: { prefix: /feed/ }
                upstream: {stub}
                response: { serializer: xml }
                mocks:
                  - when: { path: "*.xml" }
                    respond: { headers: { Content-Type: application/xml }, file: \(dir)/refund.xml }

            """
        let proxy = try ProxyHarness(routes: routes)
        defer { proxy.finish() }
        let tenant = try proxy.get("/api/refunds/7", headers: [("X-Tenant", "beta")])
        #expect(tenant.status == 202 && tenant.text == #"{"tenant":"beta","ok":true,"n":3,"none":null}"#)
        #expect(tenant.header("Serializerd-Source") == "mock")
        // The XML answer goes through the route's JSON serializer: refused as the upstream's would be.
        let refund = try proxy.get("/api/refunds/7")
        #expect(refund.status == 502 && refund.header("Serializerd-Source") == "mock")
        #expect((proxy.json(refund)?["type"] as? String)?.hasSuffix("unacceptable-content-type") == true)
        // On the XML route the same file is transcoded.
        #expect(try proxy.get("/feed/x.xml").text == #"{"refund":{"id":"7","amount":"12.50"}}"#)
        // `**` crosses segments; the query must match.
        #expect(try proxy.get("/api/deep/a/b?v=2").status == 502)
        #expect(try proxy.get("/api/deep/a/b?v=2").text.contains("text/html"))
        // map_dir: a file under the directory, by the path after the prefix.
        let fixture = try proxy.get("/api/a.json")
        #expect(fixture.text == #"{"fixture":true,"n":1}"# && fixture.header("Serializerd-Source") == "mock")
        #expect(try proxy.get("/api/deep/b.json").text == #"{"deep":1}"#)
        // A file that is not there falls through to the upstream.
        let upstream = try proxy.get("/api/json")
        #expect(upstream.status == 200 && upstream.header("Serializerd-Source") == "upstream")
        // Leaving the directory, by `..` (escaped or not) or by a symlink, is refused.
        for path in ["/api/..%2Foutside.json", "/api/deep/%2e%2e/%2e%2e/outside.json", "/api/link.json"] {
            let refused = try proxy.get(path)
            #expect(refused.status == 400, "\(path)")
            #expect(!refused.text.contains("secret"))
        }
    }

    @Test func aMissingMockFileIsAConfigErrorNamingIt() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/serializerd.yaml"
        try """
            listen: 127.0.0.1:0
            routes:
              - name: api
                match: { prefix: /api/ }
                upstream: http://127.0.0.1:9/
                mocks:
                  - when: { path: "x" }
                    respond: { file: mocks/gone.json }
                  - map_dir: nowhere/
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let check = try ServerBinary.run(["check", "--config", config])
        #expect(check.status == 1)
        #expect(check.stderrText.contains("\(dir)/mocks/gone.json") && check.stderrText.contains("does not exist"))
        #expect(check.stderrText.contains("map_dir '\(dir)/nowhere/' is not a directory"))
    }
}
