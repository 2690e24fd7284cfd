import Foundation
import TestSupport
import Testing

/// DESIGN §5 through the daemon: objects serializerd builds never repeat a member, a JSON
/// upstream's repeated keys are kept in plain output and the last wins in canonical output,
/// and nothing but misc may follow an XML root.
@Suite(.timeLimit(.minutes(3)))
struct ObjectKeysTests {
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func repeatedNamesAreGroupedOrKeptOnceInEveryFormat() throws {
        let proxy = try ProxyHarness(routes: route("xml", prefix: "/xml/", extra: "    response: { serializer: xml, xml: { namespaces: strip } }\n")
            + route("plist", prefix: "/plist/", extra: "    response: { serializer: plist }\n")
            + route("json", prefix: "/json/")
            + route("canon", prefix: "/canon/", extra: "    output: { canonical: true }\n"))
        defer { proxy.finish() }
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
        #expect(try proxy.get("/xml/file?path=\(xml)&type=application/xml").text == #"{"r":{"@x":["1","2"],"a":["3","4"]}}"#)
        #expect(try proxy.get("/plist/file?path=\(xmlPlist)&type=application/x-plist").text == #"{"b":true,"a":2}"#)
        #expect(try proxy.get("/plist/file?path=\(binaryPlist)&type=application/x-plist").text == #"{"a":2}"#)
        #expect(try proxy.get("/json/file?path=\(json)&type=application/json").text == #"{"b":1,"a":1,"a":2}"#)
        #expect(try proxy.get("/canon/file?path=\(json)&type=application/json").text == #"{"a":2,"b":1}"#)
    }

    @Test func anythingButMiscAfterTheXMLRootIsRefused() throws {
        let proxy = try ProxyHarness(routes: route("xml", prefix: "/xml/", extra: "    response: { serializer: xml }\n"))
        defer { proxy.finish() }
        for (body, status) in [(Array("<r>x</r>".utf8) + [0] + Array("<y>garbage".utf8), 502), (Array("<r>x</r>garbage".utf8), 502),
                               (Array("<r>x</r> <!-- c --> <?pi x?>\n".utf8), 200)] {
            let path = try Self.file(body)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let reply = try proxy.get("/xml/file?path=\(path)&type=application/xml")
            #expect(reply.status == status, "\(body): \(reply.text)")
            if status == 502 { #expect(proxy.json(reply)?["type"] as? String == "urn:serializerd:serialization-failed") }
        }
    }
}
