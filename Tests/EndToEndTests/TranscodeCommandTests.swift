import Foundation
import TestSupport
import Testing

/// The `serializerd` binary itself: arguments, stdin/files, stdout and exit codes.
@Suite struct TranscodeCommandTests {
    @Test func printsNormalizedJSONFromStdinAndExitsZero() throws {
        let result = try ServerBinary.run(["transcode", "--serializer", "json", "--content-type", "application/json"],
                                          stdin: Array(#" { "a" : [1, null, "\/"] } "#.utf8))
        #expect(result.status == 0)
        #expect(result.stdoutText == "{\"a\":[1,null,\"/\"]}\n")
    }

    @Test func printsTheProblemDocumentAndExitsOneOnFailure() throws {
        let result = try ServerBinary.run(["transcode", "--serializer", "json", "--content-type", "application/json",
                                           "--status", "404"], stdin: Array(#"{"message":"Not Found"}"#.utf8))
        #expect(result.status == 1)
        #expect(result.stdoutText.hasPrefix(#"{"type":"urn:serializerd:unacceptable-status","title":"Request failed: not found (404)","status":404,"detail":"accepted statuses: 200-299 (acceptable_status_codes)","code":-1011,"upstream":{"status":404,"content_type":"application/json","body":{"message":"Not Found"}}}"#))
    }

    /// DESIGN §7: no --content-type → the serializer's first default type; '' → none.
    @Test func withoutContentTypeTheSerializersOwnTypeIsAssumed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("user-\(UUID().uuidString).json").path
        try Data(#"{"a": 1}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let assumed = try ServerBinary.run(["transcode", "--serializer", "json", path])
        #expect(assumed.status == 0 && assumed.stdoutText == "{\"a\":1}\n", "\(assumed.stdoutText)")
        let form = try ServerBinary.run(["transcode", "--serializer", "form"], stdin: Array("a=1".utf8))
        #expect(form.stdoutText == "{\"a\":\"1\"}\n")
        let text = try ServerBinary.run(["transcode", "--serializer", "text"], stdin: Array("hi".utf8))
        #expect(text.stdoutText == "\"hi\"\n")
        let none = try ServerBinary.run(["transcode", "--serializer", "json", "--content-type", ""], stdin: Array("{}".utf8))
        #expect(none.status == 1)
        #expect(none.stdoutText.contains("unacceptable content-type: (none)"))
    }

    /// A file is read in one piece at its `fstat` size, a pipe in chunks: both whole,
    /// across many reads, and the output written whole.
    @Test func largeFilesAndPipesArriveWhole() throws {
        let body = Array(("[" + (0..<300_000).map { "\"v\($0)\"" }.joined(separator: " , ") + "]").utf8)
        let expected = Array(("[" + (0..<300_000).map { "\"v\($0)\"" }.joined(separator: ",") + "]\n").utf8)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("large-\(UUID().uuidString).json").path
        try Data(body).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try ServerBinary.run(["transcode", "--serializer", "json", path])
        let fromPipe = try ServerBinary.run(["transcode", "--serializer", "json"], stdin: body)
        #expect(body.count > 3_000_000 && fromFile.status == 0 && fromPipe.status == 0)
        #expect(fromFile.stdout == expected && fromPipe.stdout == expected)
    }

    @Test func readsFilesAndAppliesOptions() throws {
        let result = try ServerBinary.run(["transcode", "--serializer", "xml", "--content-type", "application/xml",
                                           "--option", "xml.force_array=/rss/channel/item", "--option", "namespaces=strip",
                                           Fixture.path("xml/single-item.xml")])
        #expect(result.status == 0)
        #expect(result.stdoutText == "{\"rss\":{\"@version\":\"2.0\",\"channel\":{\"title\":\"Only\",\"item\":[{\"title\":\"Alone\"}]}}}\n")
    }

    @Test func compoundStatusOptionAndCanonicalOutput() throws {
        let result = try ServerBinary.run(["transcode", "--serializer", "compound", "--option", "serializers=xml,json",
                                           "--option", "acceptable_status_codes=200-299,404", "--status", "404",
                                           "--content-type", "application/json", "--option", "canonical=true"],
                                          stdin: Array(#"{"b":1.50,"a":1e2}"#.utf8))
        #expect(result.status == 0)
        #expect(result.stdoutText == "{\"a\":100,\"b\":1.5}\n")
    }

    /// The output cap is the config's `limits.max_response_body`, 32 MiB unless raised.
    @Test func maxResponseBodySetsTheOutputCap() throws {
        let body = Array(("[" + String(repeating: "1,", count: 999) + "1]").utf8)   // 2,001 bytes
        // Input within the cap whose JSON outgrows it (each `<b/>` becomes `null,`).
        let xml = Array(("<r>" + String(repeating: "<b/>", count: 240) + "</r>").utf8)   // 967 bytes
        let capped = try ServerBinary.run(["transcode", "--serializer", "xml", "--max-response-body", "1KiB"], stdin: xml)
        #expect(capped.status == 1)
        #expect(capped.stdoutText.contains("the output cap (limits.max_response_body)"), "\(capped.stdoutText)")
        let raised = try ServerBinary.run(["transcode", "--serializer", "json", "--max-response-body", "4KiB"], stdin: body)
        #expect(raised.status == 0 && raised.stdout.count == body.count + 1)
        let bad = try ServerBinary.run(["transcode", "--serializer", "json", "--max-response-body", "lots"], stdin: body)
        #expect(bad.status == 64 && bad.stderrText.contains("expected a positive size like 512KiB or 64MiB, found 'lots'"))
    }

    @Test func badOptionsAreUsageErrorsOnStderr() throws {
        let result = try ServerBinary.run(["transcode", "--serializer", "json", "--option", "xml.force_array=/a"], stdin: [])
        #expect(result.status == 64)   // EX_USAGE, distinct from a serializer failure (1)
        #expect(result.stderrText.contains("applies to the xml serializer, not json"))
        let unknown = try ServerBinary.run(["transcode", "--serializer", "yaml"], stdin: [])
        #expect(unknown.stderrText.contains("unknown serializer 'yaml'"))
        let missing = try ServerBinary.run(["transcode", "--serializer", "json", "/nonexistent/file.json"])
        #expect(missing.stderrText.contains("cannot open '/nonexistent/file.json'"))
    }

    @Test func versionPrintsTheProductVersion() throws {
        let result = try ServerBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdoutText.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil)
    }

    @Test func binaryInputThroughRawAndImage() throws {
        let png = try ServerBinary.run(["transcode", "--serializer", "image", "--content-type", "image/png",
                                        Fixture.path("images/sample.png")])
        #expect(png.stdoutText == "{\"format\":\"png\",\"width\":7,\"height\":5,\"bytes\":77}\n")
        let raw = try ServerBinary.run(["transcode", "--serializer", "raw"], stdin: [0x00, 0xFF])
        #expect(raw.stdoutText == "{\"bytes\":2,\"base64\":\"AP8=\"}\n")
    }
}
