import Foundation
import Testing
@testable import Telemetry

/// The event's JSON is written directly into memory for speed; `LogLine`, which writes
/// every other JSON log line, is the reference it must match byte for byte.
@Suite struct EventJSONTests {
    func reference(_ e: CompletionEvent) -> [UInt8] {
        var clock = LogClock()
        var line = LogLine(format: .json, prefix: false, level: e.level, message: "request_completed",
                           timestamp: clock.format(e.startedAt + e.duration))
        e.appendFields(to: &line)
        line.bytes.append(UInt8(ascii: "}"))
        return line.bytes
    }

    static let hostile = "\"\\\n\t\u{0}\u{1F}é😀\u{2028}</script>"

    @Test(arguments: [
        event(),
        event(status: 499, outcome: "client_gone", id: "r2", upstream: nil, serialize: nil),
        event(status: 502, outcome: "bad_content_type", id: "x\"y", duration: 123_456.789_012, error: hostile),
        CompletionEvent(startedAt: 0, requestID: hostile, route: hostile, method: hostile, path: hostile, upstreamURL: hostile,
                        status: Int.max, upstreamStatus: Int.min, contentType: hostile, serializer: hostile, outcome: hostile,
                        bytesIn: -1, bytesOut: 0, duration: 0, upstreamDuration: 1e-7, serializeDuration: 1e13,
                        error: String(repeating: "\u{1}", count: 300), responseContentType: nil, faults: hostile + String(repeating: "\u{1}", count: 80)),
        // A broken contract adds its count; the widest numbers everywhere.
        CompletionEvent(startedAt: 0, requestID: "c", route: "r", method: "GET", path: "/", upstreamURL: nil,
                        status: Int.min, upstreamStatus: Int.min, contentType: nil, serializer: nil, outcome: "ok",
                        bytesIn: Int.min, bytesOut: Int.min, duration: 1e13, upstreamDuration: 1e13, serializeDuration: 1e13,
                        error: nil, responseContentType: nil, unsafeNumbers: Int.min, contractViolations: Int.min),
        CompletionEvent(startedAt: 1_763_000_000.999_9, requestID: "", route: "", method: "", path: "", upstreamURL: nil,
                        status: 0, upstreamStatus: nil, contentType: nil, serializer: nil, outcome: "", bytesIn: 0,
                        bytesOut: 0, duration: 0, upstreamDuration: nil, serializeDuration: nil, error: nil,
                        responseContentType: nil),
    ])
    func matchesTheLogLineWriter(_ e: CompletionEvent) throws {
        let fast = e.json
        #expect(fast == reference(e), "\(String(decoding: fast, as: UTF8.self))")
        #expect(fast.count <= e.jsonBound)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(fast)) as? [String: Any])
        #expect(object["request_id"] as? String == e.requestID && object["error"] as? String == e.error)
    }
}
