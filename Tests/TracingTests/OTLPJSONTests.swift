import Foundation
import Testing
@testable import Tracing

@Suite struct OTLPJSONTests {
    static func trace(children: Int = 1, events: [SpanEvent] = [], state: String? = nil, parent: UInt64 = 0xABC) -> FinishedTrace {
        let server = SpanRecord(name: "GET api", kind: .server, spanID: 0x1111, start: 1_700_000_000_000_000_000, end: 1_700_000_000_005_000_000,
                                attributes: [SpanAttribute("http.request.method", "GET"), SpanAttribute("http.response.status_code", 502),
                                             SpanAttribute("serializerd.flag", true)],
                                events: events, error: "upstream \"unavailable\"\n")
        let kids = (0..<children).map { k in
            SpanRecord(name: "serialize", kind: .internal, spanID: 0x2000 + UInt64(k), start: 1_700_000_000_001_000_000,
                       end: 1_700_000_000_002_000_000, attributes: [SpanAttribute("serializerd.serializer", "json")])
        }
        return FinishedTrace(traceHigh: 0x0102030405060708, traceLow: 0x090A0B0C0D0E0F10, parentSpanID: parent, traceState: state,
                             server: server, children: kids)
    }

    static func spans(_ body: [UInt8]) throws -> [[String: Any]] {
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let resource = try #require((doc["resourceSpans"] as? [[String: Any]])?.first)
        let scope = try #require((resource["scopeSpans"] as? [[String: Any]])?.first)
        return try #require(scope["spans"] as? [[String: Any]])
    }

    @Test func spansCarryIdsLinksAndAttributesInOTLPsJSON() throws {
        let body = OTLPJSON.encode([Self.trace(events: [SpanEvent(name: "retry", time: 1_700_000_000_003_000_000,
                                                                   attributes: [SpanAttribute("serializerd.attempt", 2)])],
                                               state: "vendor=x")][...],
                                   serviceName: "svc \"one\"", version: "1.2")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let resource = try #require((doc["resourceSpans"] as? [[String: Any]])?.first?["resource"] as? [String: Any])
        let service = (resource["attributes"] as? [[String: Any]])?.first
        #expect(service?["key"] as? String == "service.name")
        #expect((service?["value"] as? [String: Any])?["stringValue"] as? String == "svc \"one\"")
        let spans = try Self.spans(body)
        #expect(spans.count == 2)
        let server = spans[0], child = spans[1]
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
        var trace = Self.trace(parent: 0)
        trace.server.name = "GET \u{1}a"
        let spans = try Self.spans(OTLPJSON.encode([trace][...], serviceName: "s", version: "v"))
        #expect(spans[0]["parentSpanId"] == nil && spans[0]["name"] as? String == "GET \u{1}a")
    }
}

extension OTLPJSONTests {
    /// Numbers of every width, and a body past the writer's first capacity.
    @Test func decimalsOfEveryWidthAndABodyThatGrows() throws {
        let values: [UInt64] = [0, 7, 10, 99, 100, 101, 999, 1_000, 123_456_789, 1_700_000_000_000_000_000, UInt64.max]
        var trace = Self.trace(children: 0)
        trace.server.attributes = values.map { SpanAttribute("n", Int(truncatingIfNeeded: $0 & 0x7FFF_FFFF_FFFF_FFFF)) }
        trace.server.events = values.map { SpanEvent(name: "e", time: $0) }
        trace.server.name = String(repeating: "long \u{e9}\"", count: 20_000)
        let spans = try Self.spans(OTLPJSON.encode([trace][...], serviceName: "s", version: "v"))
        let times = (spans[0]["events"] as? [[String: Any]] ?? []).map { $0["timeUnixNano"] as? String ?? "" }
        #expect(times == values.map { String($0) })
        let numbers = (spans[0]["attributes"] as? [[String: Any]] ?? []).map { ($0["value"] as? [String: Any])?["intValue"] as? String ?? "" }
        #expect(numbers == values.map { String($0 & 0x7FFF_FFFF_FFFF_FFFF) })
        #expect(spans[0]["name"] as? String == trace.server.name)
    }
}
