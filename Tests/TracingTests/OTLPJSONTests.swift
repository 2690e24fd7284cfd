import Foundation
import Testing
@testable import Tracing

@Suite struct OTLPJSONTests {
    static let traceID = TraceID(high: 0x0102030405060708, low: 0x090A0B0C0D0E0F10)

    /// A trace as a request writes it: `children` stage spans, then the `SERVER` span.
    static func trace(into batch: SpanBatch, children: Int = 1, events: [SpanEvent] = [], state: String? = nil,
                      parent: UInt64 = 0xABC, serverName: String = "GET", _ suffix: String? = "api", id: TraceID = traceID,
                      serverAttributes: (inout SpanAttributes) -> Void = { a in
                          a.add("http.request.method", "GET")
                          a.add("http.response.status_code", 502)
                          a.add("serializerd.flag", true)
                      }) {
        for k in 0..<children {
            batch.span(id, "serialize", kind: .internal, id: 0x2000 + UInt64(k), parent: 0x1111, start: 1_700_000_000_001_000_000,
                       end: 1_700_000_000_002_000_000) { $0.add("serializerd.serializer", "json") }
        }
        batch.span(id, serverName, suffix, kind: .server, id: 0x1111, parent: parent, start: 1_700_000_000_000_000_000,
                   end: 1_700_000_000_005_000_000, traceState: state, events: events, error: "upstream \"unavailable\"\n",
                   attributes: serverAttributes)
    }

    /// The body of one batch that `write` fills.
    static func body(serviceName: String = "s", version: String = "v", _ write: (SpanBatch) -> Void) -> [UInt8] {
        let batch = SpanBatch(serviceName: serviceName, version: version, capacity: 64)
        write(batch)
        return batch.body()
    }

    /// Each of `names` written as a span's name and as both halves of a joined value,
    /// read back as it was.
    static func expectReadBack(_ names: [String], joinedBy separator: Character) throws {
        let spans = try Self.spans(Self.body { batch in
            for (k, name) in names.enumerated() {
                batch.span(TraceID(high: 1, low: 2), name, kind: .internal, id: UInt64(k + 1), parent: 0, start: 1, end: 2) {
                    $0.add("v", name, UInt8(ascii: separator.unicodeScalars.first!), name)
                }
            }
        })
        #expect(spans.map { $0["name"] as? String ?? "?" } == names)
        let values = spans.map { (($0["attributes"] as? [[String: Any]])?.first?["value"] as? [String: Any])?["stringValue"] as? String ?? "?" }
        #expect(values == names.map { $0 + String(separator) + $0 })
    }

    static func spans(_ body: [UInt8]) throws -> [[String: Any]] {
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let resource = try #require((doc["resourceSpans"] as? [[String: Any]])?.first)
        let scope = try #require((resource["scopeSpans"] as? [[String: Any]])?.first)
        return try #require(scope["spans"] as? [[String: Any]])
    }

    @Test func spansCarryIdsLinksAndAttributesInOTLPsJSON() throws {
        let body = Self.body(serviceName: "svc \"one\"", version: "1.2") {
            Self.trace(into: $0, events: [SpanEvent(name: "retry", time: 1_700_000_000_003_000_000,
                                                    attributes: [SpanAttribute("serializerd.attempt", 2)])], state: "vendor=x")
        }
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let resource = try #require((doc["resourceSpans"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
        let service = (resource["attributes"] as? [[String: Any]])?.first
        #expect(service?["key"] as? String == "service.name")
        #expect((service?["value"] as? [String: Any])?["stringValue"] as? String == "svc \"one\"")
        let spans = try Self.spans(body)
        #expect(spans.count == 2)
        let server = spans[1], child = spans[0]
        #expect(server["traceId"] as? String == "0102030405060708090a0b0c0d0e0f10")
        #expect(server["spanId"] as? String == "0000000000001111" && server["parentSpanId"] as? String == "0000000000000abc")
        #expect(server["kind"] as? Int == 2 && child["kind"] as? Int == 1)
        #expect(server["traceState"] as? String == "vendor=x" && child["traceState"] == nil)
        #expect(child["parentSpanId"] as? String == "0000000000001111")
        #expect(server["startTimeUnixNano"] as? String == "1700000000000000000")
        let attributes = try #require(server["attributes"] as? [[String: Any]])
        #expect((attributes[1]["value"] as? [String: Any])?["intValue"] as? String == "502")
        #expect((attributes[2]["value"] as? [String: Any])?["boolValue"] as? Bool == true)
        let status = try #require(server["status"] as? [String: Any])
        #expect(status["code"] as? Int == 2 && status["message"] as? String == "upstream \"unavailable\"\n")
        let event = try #require((server["events"] as? [[String: Any]])?.first)
        #expect(event["name"] as? String == "retry" && event["timeUnixNano"] as? String == "1700000000003000000")
        #expect(child["status"] == nil && child["events"] == nil)
    }

    @Test func aTraceBegunHereHasNoParentAndControlBytesAreEscaped() throws {
        let spans = try Self.spans(Self.body { Self.trace(into: $0, children: 0, parent: 0, serverName: "GET", "\u{1}a\\") })
        #expect(spans[0]["parentSpanId"] == nil && spans[0]["name"] as? String == "GET \u{1}a\\")
    }

    /// Spans of several traces in one batch, each with its own trace's id (every hex digit),
    /// attributes encoded once added among others.
    @Test func tracesShareOneBatch() throws {
        let shared = EncodedAttributes([SpanAttribute("server.address", "h\"1"), SpanAttribute("server.port", 8443)])
        let ids = [Self.traceID, TraceID(high: 0xFEDC_BA98_7654_3210, low: 0x0123_4567_89AB_CDEF), TraceID(high: 0xA0, low: 0xF)]
        let spans = try Self.spans(Self.body { batch in
            for k in 0..<3 {
                Self.trace(into: batch, children: k, id: ids[k]) { a in
                    a.add("http.request.method", "GET")
                    a.add(encoded: shared)
                    a.add("serializerd.n", k)
                }
            }
        })
        #expect(spans.count == 1 + 2 + 3)
        #expect(spans.map { $0["traceId"] as? String ?? "" } == ["0102030405060708090a0b0c0d0e0f10"]
            + Array(repeating: "fedcba98765432100123456789abcdef", count: 2) + Array(repeating: "00000000000000a0000000000000000f", count: 3))
        let servers = spans.filter { $0["kind"] as? Int == 2 }
        #expect(servers.count == 3)
        for (k, server) in servers.enumerated() {
            let attributes = try #require(server["attributes"] as? [[String: Any]])
            #expect(attributes.map { $0["key"] as? String ?? "" } == ["http.request.method", "server.address", "server.port", "serializerd.n"])
            #expect((attributes[1]["value"] as? [String: Any])?["stringValue"] as? String == "h\"1")
            #expect((attributes[2]["value"] as? [String: Any])?["intValue"] as? String == "8443")
            #expect((attributes[3]["value"] as? [String: Any])?["intValue"] as? String == String(k))
        }
        // Only attributes encoded ahead, and none at all.
        let two = try Self.spans(Self.body { alone in
            alone.span(TraceID(high: 1, low: 2), "a", kind: .internal, id: 1, parent: 0, start: 5, end: 4) { $0.add(encoded: shared) }
            alone.span(TraceID(high: 1, low: 2), "b", kind: .internal, id: 2, parent: 0, start: 5, end: 6) {
                $0.add(encoded: EncodedAttributes([]))
            }
        })
        #expect((two[0]["attributes"] as? [[String: Any]])?.count == 2 && two[1]["attributes"] == nil)
        // An end before the start is written as the start.
        #expect(two[0]["endTimeUnixNano"] as? String == "5")
    }
}

extension OTLPJSONTests {
    /// Numbers of every width, and a body past the writer's first capacity.
    @Test func decimalsOfEveryWidthAndABodyThatGrows() throws {
        let values: [UInt64] = [0, 7, 10, 99, 100, 101, 999, 1_000, 99_999_999, 100_000_000, 100_000_001, 123_456_789,
                                9_999_999_999_999_999, 10_000_000_000_000_000, 10_000_000_000_000_005, 1_000_000_000_000_000_007,
                                1_700_000_000_000_000_000, 10_000_000_000_000_000_000, UInt64.max]
        let name = String(repeating: "long \u{e9}\"", count: 20_000)
        let spans = try Self.spans(Self.body { batch in
            Self.trace(into: batch, children: 0, events: values.map { SpanEvent(name: "e", time: $0) }, serverName: name, nil) { a in
                for v in values { a.add("n", Int(truncatingIfNeeded: v & 0x7FFF_FFFF_FFFF_FFFF)) }
            }
        })
        let times = (spans[0]["events"] as? [[String: Any]] ?? []).map { $0["timeUnixNano"] as? String ?? "" }
        #expect(times == values.map { String($0) })
        let numbers = (spans[0]["attributes"] as? [[String: Any]] ?? []).map { ($0["value"] as? [String: Any])?["intValue"] as? String ?? "" }
        #expect(numbers == values.map { String($0 & 0x7FFF_FFFF_FFFF_FFFF) })
        #expect(spans[0]["name"] as? String == name)
    }

    /// Strings escaped wherever their special bytes fall, eight bytes at a time or not.
    @Test func everySpecialByteAtEveryPlace() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{1}", "\u{1f}", "\u{7f}", "\u{e9}", " "]
        var names: [String] = []
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31] {
            for special in specials {
                for at in Set([0, length / 2, max(0, length - 1)]) where at <= length {
                    var text = String(repeating: "a", count: length)
                    text.insert(special, at: text.index(text.startIndex, offsetBy: at))
                    names.append(text)
                }
            }
        }
        try Self.expectReadBack(names, joinedBy: "/")
    }
}

extension OTLPJSONTests {
    /// A batch with no span is still a whole request, and one written again after it was
    /// sent holds only its new spans.
    @Test func anEmptyBatchAndABatchReopened() throws {
        #expect(try Self.spans(Self.body { _ in }).isEmpty)
        let batch = SpanBatch(serviceName: "one", version: "v", capacity: 64)
        Self.trace(into: batch, children: 3)
        #expect(try Self.spans(batch.body()).count == 4)
        batch.reopen(serviceName: "two", version: "v", opened: 5)
        Self.trace(into: batch, children: 0)
        let body = batch.body()
        #expect(try Self.spans(body).count == 1 && batch.count == 1 && batch.opened == 5)
        #expect(String(decoding: body, as: UTF8.self).contains(#"{"stringValue":"two"}"#))
    }
}

extension OTLPJSONTests {
    /// Random strings of every short length, from an alphabet of what needs escaping and
    /// what does not.
    @Test func randomStringsReadBackAsWritten() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "/", "\"", "\\", "\n", "\u{0}", "\u{1f}", "\u{7f}", "\u{e9}", "\u{20ac}", "\u{1f600}"]
        let names = (0..<2_000).map { k in
            String((0..<(k % 41)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        try Self.expectReadBack(names, joinedBy: "|")
    }
}
