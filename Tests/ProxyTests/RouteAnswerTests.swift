import Foundation
@testable import Proxy
import Testing

/// What a route makes of an answer, in process: mocks in order before the upstream,
/// objects that never repeat a member, canonical numbers that never round.
@Suite struct RouteAnswerTests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mocks-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/fixtures/deep", withIntermediateDirectories: true)
        return path
    }

    static func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func mockRulesAnswerInOrderThroughTheSerializerAndMapDirStaysInside() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(#"<?xml version="1.0"?><refund><id>7</id><amount>12.50</amount></refund>"#.utf8).write(to: URL(fileURLWithPath: dir + "/refund.xml"))
        try Data(#"{"fixture":true,"n":1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/fixtures/a.json"))
        try Data(#"{"deep":1}"#.utf8).write(to: URL(fileURLWithPath: dir + "/fixtures/deep/b.json"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: dir + "/outside.json"))
        try FileManager.default.createSymbolicLink(atPath: dir + "/fixtures/link.json", withDestinationPath: dir + "/outside.json")
        let proxy = try InProcessProxy(routes: """
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

            """)
        let tenant = proxy.get("/api/refunds/7", headers: [("X-Tenant", "beta")])
        #expect(tenant.status == 202 && tenant.text == #"{"tenant":"beta","ok":true,"n":3,"none":null}"#)
        #expect(tenant.replyHeader("Serializerd-Source") == "mock")
        // The XML answer goes through the route's JSON serializer: refused as the upstream's would be.
        let refund = proxy.get("/api/refunds/7")
        #expect(refund.status == 502 && refund.replyHeader("Serializerd-Source") == "mock")
        #expect((refund.replyJSON?["type"] as? String)?.hasSuffix("unacceptable-content-type") == true)
        // On the XML route the same file is transcoded.
        #expect(proxy.get("/feed/x.xml").text == #"{"refund":{"id":"7","amount":"12.50"}}"#)
        // `**` crosses segments; the query must match.
        let deep = proxy.get("/api/deep/a/b?v=2")
        #expect(deep.status == 502 && deep.text.contains("text/html"))
        // map_dir: a file under the directory, by the path after the prefix.
        let fixture = proxy.get("/api/a.json")
        #expect(fixture.text == #"{"fixture":true,"n":1}"# && fixture.replyHeader("Serializerd-Source") == "mock")
        #expect(proxy.get("/api/deep/b.json").text == #"{"deep":1}"#)
        #expect(proxy.upstream.received.isEmpty)
        // A file that is not there falls through to the upstream.
        let upstream = proxy.get("/api/json")
        #expect(upstream.status == 200 && upstream.replyHeader("Serializerd-Source") == "upstream")
        // Leaving the directory, by `..` (escaped or not) or by a symlink, is refused.
        for path in ["/api/..%2Foutside.json", "/api/deep/%2e%2e/%2e%2e/outside.json", "/api/link.json"] {
            let refused = proxy.get(path)
            #expect(refused.status == 400, "\(path)")
            #expect(!refused.text.contains("secret"))
        }
        #expect(proxy.upstream.received.count == 1)
    }

    @Test func repeatedNamesAreGroupedOrKeptOnceInEveryFormat() throws {
        let proxy = try InProcessProxy(routes: route("xml", prefix: "/xml/", extra: "    response: { serializer: xml, xml: { namespaces: strip } }\n")
            + route("plist", prefix: "/plist/", extra: "    response: { serializer: plist }\n")
            + route("json", prefix: "/json/")
            + route("canon", prefix: "/canon/", extra: "    output: { canonical: true }\n"))
        let xml = try Self.file(Array(#"<r xmlns:p="u1" xmlns:q="u2" p:x="1" q:x="2"><p:a>3</p:a><q:a>4</q:a></r>"#.utf8))
        let xmlPlist = try Self.file(Array(("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><integer>1</integer>"
            + "<key>b</key><true/><key>a</key><integer>2</integer></dict></plist>").utf8))
        // bplist00: {a: 1, a: 2} with two distinct key objects of the same text.
        var binary = Array("bplist00".utf8) + [0xD2, 1, 2, 3, 4, 0x51, 0x61, 0x51, 0x61, 0x10, 1, 0x10, 2]
        let offsets: [UInt8] = [8, 13, 15, 17, 19]
        let table = binary.count
        binary += offsets
        binary += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 5] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        let binaryPlist = try Self.file(binary)
        let json = try Self.file(Array(#"{"b":1,"a":1,"a":2}"#.utf8))
        defer { for path in [xml, xmlPlist, binaryPlist, json] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(proxy.get("/xml/file?path=\(xml)&type=application/xml").text == #"{"r":{"@x":["1","2"],"a":["3","4"]}}"#)
        #expect(proxy.get("/plist/file?path=\(xmlPlist)&type=application/x-plist").text == #"{"b":true,"a":2}"#)
        #expect(proxy.get("/plist/file?path=\(binaryPlist)&type=application/x-plist").text == #"{"a":2}"#)
        #expect(proxy.get("/json/file?path=\(json)&type=application/json").text == #"{"b":1,"a":1,"a":2}"#)
        #expect(proxy.get("/canon/file?path=\(json)&type=application/json").text == #"{"a":2,"b":1}"#)
    }

    @Test func anythingButMiscAfterTheXMLRootIsRefused() throws {
        let proxy = try InProcessProxy(routes: route("xml", prefix: "/xml/", extra: "    response: { serializer: xml }\n"))
        for (body, status) in [(Array("<r>x</r>".utf8) + [0] + Array("<y>garbage".utf8), 502), (Array("<r>x</r>garbage".utf8), 502),
                               (Array("<r>x</r> <!-- c --> <?pi x?>\n".utf8), 200)] {
            let path = try Self.file(body)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let reply = proxy.get("/xml/file?path=\(path)&type=application/xml")
            #expect(reply.status == status, "\(body): \(reply.text)")
            if status == 502 { #expect(reply.replyJSON?["type"] as? String == "urn:serializerd:serialization-failed") }
        }
    }

    @Test func canonicalOutputNeverRoundsAValue() throws {
        let proxy = try InProcessProxy(routes: route("canon", prefix: "/canon/", extra: "    output: { canonical: true }\n")
            + route("canonstr", prefix: "/canonstr/", extra: "    output: { canonical: true, numbers: string }\n"))
        let body = "%7B%22b%22%3A9007199254740993%2C%22a%22%3A1.10%7D"   // {"b":9007199254740993,"a":1.10}
        let refused = proxy.get("/canon/json?body=\(body)")
        #expect(refused.status == 502)
        #expect((refused.replyJSON?["detail"] as? String)?.contains("9007199254740993 at /b") == true, "\(refused.text)")
        #expect(proxy.get("/canonstr/json?body=\(body)").text == #"{"a":1.1,"b":"9007199254740993"}"#)
        // Safe numbers alone: canonical as before.
        #expect(proxy.get("/canon/json?body=%5B1.10%2C1e23%5D").text == "[1.1,1e+23]")
    }
}
