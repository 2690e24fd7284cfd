import Serializers
import Telemetry
@testable import Tapes
import Testing

@Suite struct HARCodecTests {
    static func entry(_ url: String = "http://up.test/v1/a?x=1&y=%20z", body: [UInt8] = Array("héllo".utf8),
                      requestBody: [UInt8] = []) -> TapeEntry {
        TapeEntry(request: TapeRequest(method: "POST", url: url, headers: HeaderFields([("Content-Type", "application/json"), ("X-A", "1")]), body: requestBody),
                  status: 201, responseHeaders: HeaderFields([("Content-Type", "application/octet-stream"), ("ETag", "\"v\"")]),
                  responseBody: body, startedAt: 1_700_000_000.25, duration: 0.0125)
    }

    static func file(_ entries: [TapeEntry]) -> [UInt8] {
        var out = HARCodec.head()
        for (k, e) in entries.enumerated() { if k > 0 { out.append(UInt8(ascii: ",")) }; out += HARCodec.encode(e) }
        return out + HARCodec.tail
    }

    @Test func entriesSurviveTheFileTextAndBinaryBodiesAlike() throws {
        let binary: [UInt8] = [0, 0xFF, 0xFE, 0x80, 10, 13]
        let entries = [Self.entry(), Self.entry(body: binary, requestBody: [0xC3, 0x28]), Self.entry(body: [], requestBody: Array("{}".utf8))]
        let decoded = try HARCodec.decode(Self.file(entries))
        #expect(decoded == entries)
        let text = String(decoding: Self.file([entries[1]]), as: UTF8.self)
        #expect(text.contains(#""encoding":"base64""#) && text.contains(#""_encoding":"base64""#))
        // HAR's queryString holds decoded values.
        #expect(String(decoding: Self.file([entries[0]]), as: UTF8.self).contains(#"{"name":"y","value":" z"}"#))
    }

    /// What a worker records (straight from its buffers, redacting on the way) is byte for
    /// byte what encoding the redacted entry gives.
    @Test func encodingFromBuffersEqualsEncodingTheRedactedEntry() throws {
        let capture = Redaction(headers: ["Authorization", "X-Key"], query: ["api_key"], json: ["/password", "/items/0/token"])
        let cases = [
            Self.entry(),
            Self.entry("http://u:pw@up.test/v1/a?api_key=s3cret&x=1#f", body: Array(#"{"items":[{"token":"t"}],"ok":true}"#.utf8),
                       requestBody: Array(#"{"password":"p","q":"\"quoted\"\n"}"#.utf8)),
            Self.entry(body: [0, 0xFF, 0x22, 0x5C], requestBody: Array("password=p&x=1".utf8)),
            TapeEntry(request: TapeRequest(method: "PUT", url: "http://up.test/", headers: HeaderFields([("authorization", "Bearer x"), ("content-type", "application/x-www-form-urlencoded")]),
                                           body: Array("password=p&x=%22".utf8)),
                      status: 599, responseHeaders: HeaderFields([("X-KEY", "k"), ("Content-Type", "text/plain; charset=utf-8"), ("Content-Type", "ignored/second")]),
                      responseBody: Array("line\u{1}\ttab \u{7F} é 🎉".utf8), startedAt: 0, duration: 12.5),
        ]
        for entry in cases {
            let fromBuffers = HARCodec.encode(method: entry.request.method, url: entry.request.url, requestHeaders: { entry.request.headers.forEach($0) },
                                              requestBody: entry.request.body, status: entry.status, responseHeaders: { entry.responseHeaders.forEach($0) },
                                              responseBody: entry.responseBody, startedAt: entry.startedAt, duration: entry.duration, capture: capture)
            #expect(fromBuffers == HARCodec.encode(entry.redacted(by: capture)))
            #expect(try HARCodec.decodeEntry(fromBuffers) == entry.redacted(by: capture))
            let text = String(decoding: fromBuffers, as: UTF8.self)
            #expect(!text.contains("s3cret") && !text.contains("Bearer") && !text.contains(#"\"p\""#) && !text.contains(":pw@"))
        }
    }

    /// Text dense with escapes, and every control byte, written the way JSON parsers read.
    @Test func wideQuotingEscapesLikeTheNarrowOne() throws {
        var samples: [[UInt8]] = [[], Array(#"{"a":"b\c"}"#.utf8), (0..<0x80).map { UInt8($0) }, Array(repeating: 0x22, count: 37)]
        samples.append(Array("ok ".utf8) + (0..<40).flatMap { [UInt8(ascii: "x"), UInt8($0 % 0x20)] })
        // Every length to 100, dense and sparse in escapes (a fixed generator: reproducible).
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let alphabet: [UInt8] = [0x22, 0x5C, 0x0A, 0x01, 0x1F, 0x7F, 0xC3, 0xA9] + Array("abcdefghij".utf8)
        for length in 0...100 {
            for dense in [false, true] {
                samples.append((0..<length).map { _ in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let pick = Int(state >> 33)
                    return dense ? alphabet[pick % alphabet.count] : (pick % 9 == 0 ? alphabet[pick % 8] : UInt8(ascii: "a") + UInt8(pick % 26))
                })
            }
        }
        for bytes in samples {
            let wide = bytes.withUnsafeBufferPointer { input in
                [UInt8](unsafeUninitializedCapacity: JSONEscaping.wideRoom(input.count)) { out, count in
                    count = JSONEscaping.writeQuotedWide(input, to: out.baseAddress!)
                }
            }
            var narrow: [UInt8] = []
            bytes.withUnsafeBufferPointer { JSONEscaping.appendQuoted($0, to: &narrow) }
            #expect(wide == narrow)
        }
    }

    @Test(arguments: [
        ("[]", "not HAR"), ("{\"log\":{}}", "no \"entries\""), ("{\"log\":{\"entries\":[", "not JSON"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"},"response":{"status":-1}}]}}"#, "entry 0: response.status"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"},"response":{"status":200,"content":{"text":"%%%","encoding":"base64"}}}]}}"#,
         "entry 0: response.content.text is not valid base64"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/","headers":[{"name":"X","value":"a\r\nB: c"}]},"response":{"status":200}}]}}"#,
         "CR, LF or NUL"),
        (#"{"log":{"entries":[{"request":{"method":"G T","url":"http://a/"},"response":{"status":200}}]}}"#, "not an HTTP method"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"},"response":{"status":200,"content":{"mimeType":"text/plain\r\nX-Injected: 1"}}}]}}"#,
         "entry 0: response.content.mimeType holds CR, LF or NUL"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"ftp://a/"},"response":{"status":200}}]}}"#, "not an http(s) URL"),
        (#"{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"},"response":{"status":200,"content":{"text":"x","encoding":"gzip"}}}]}}"#,
         "not supported"),
    ])
    func badFilesAreRefusedWithTheEntryAndField(input: String, message: String) {
        #expect { try HARCodec.decode(Array(input.utf8)) } throws: { error in
            (error as? HARError)?.message.contains(message) == true
        }
    }

    /// What browsers write: HTTP/2 pseudo-headers, the type only in content.mimeType,
    /// an offset in startedDateTime.
    @Test func aBrowserStyleEntryImports() throws {
        let har = #"""
        {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],"entries":[{
          "startedDateTime":"2024-05-01T10:00:00.500+02:00","time":12.5,
          "request":{"method":"GET","url":"https://api.example.test/v1/items?page=2","httpVersion":"http/2.0",
            "headers":[{"name":":authority","value":"api.example.test"},{"name":"accept","value":"*/*"}],
            "queryString":[{"name":"page","value":"2"}],"cookies":[],"headersSize":-1,"bodySize":0},
          "response":{"status":200,"statusText":"","httpVersion":"http/2.0","headers":[{"name":"cache-control","value":"no-cache"}],
            "cookies":[],"content":{"size":9,"mimeType":"application/json","text":"{\"ok\":1}"},"redirectURL":"",
            "headersSize":-1,"bodySize":-1,"_transferSize":120},
          "cache":{},"timings":{"blocked":-1,"dns":-1,"ssl":-1,"connect":-1,"send":0,"wait":12,"receive":0.5},
          "_resourceType":"fetch"}]}}
        """#
        let entries = try HARCodec.decode(Array(har.utf8))
        #expect(entries.count == 1)
        let e = try #require(entries.first)
        #expect(e.request.headers.pairs.map(\.0) == ["accept"])
        #expect(e.contentType == "application/json")
        #expect(e.responseBody == Array(#"{"ok":1}"#.utf8))
        #expect(e.startedAt == 1_714_550_400.5)
        #expect(e.duration == 0.0125)
        #expect(e.request.pathAndQuery.path == "/v1/items" && e.request.pathAndQuery.query == "page=2")
    }
}
