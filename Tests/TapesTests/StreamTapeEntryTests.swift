import Foundation
import Serializers
import Telemetry
@testable import Tapes
import Testing

/// A recorded stream's entry: its chunks through the HAR file, and `capture`'s redaction
/// of its lines with the chunks' offsets moved along.
@Suite struct StreamTapeEntryTests {
    static func stream(_ body: String, chunks: [StreamChunk], type: String = "text/event-stream") -> TapeEntry {
        TapeEntry(request: TapeRequest(method: "GET", url: "http://up.test/sse", headers: HeaderFields(), body: []),
                  status: 200, responseHeaders: HeaderFields([("Content-Type", type)]), responseBody: Array(body.utf8),
                  startedAt: 1_700_000_000, duration: 1.5, chunks: chunks)
    }

    @Test func chunksSurviveTheFile() throws {
        let entry = Self.stream("data: 1\n\ndata: 2\n\n", chunks: [.init(milliseconds: 0, offset: 0), .init(milliseconds: 250, offset: 9)])
        let decoded = try HARCodec.decode(HARCodecTests.file([entry, HARCodecTests.entry()]))
        #expect(decoded.first == entry && decoded.last?.chunks == nil)
        for bad in ["[[0,5],[1,2]]", "[[0,99]]", "[[-1,0]]", "[[0]]", "{}"] {
            var text = String(decoding: HARCodecTests.file([entry]), as: UTF8.self)
            text = text.replacingOccurrences(of: "[[0,0],[250,9]]", with: bad)
            #expect(throws: HARError.self, "\(bad)") { try HARCodec.decode(Array(text.utf8)) }
        }
    }

    @Test func redactionIsPerLineAndMovesTheOffsets() {
        let body = "data: {\"secret\":\"hunter2\",\"i\":1}\n\n: keep-alive\ndata: {\"i\":2}\n\n"
        let second = body.utf8.count - "data: {\"i\":2}\n\n".utf8.count
        let entry = Self.stream(body, chunks: [.init(milliseconds: 0, offset: 0), .init(milliseconds: 10, offset: second),
                                               .init(milliseconds: 20, offset: body.utf8.count)])
        let redacted = entry.redacted(by: Redaction(headers: [], query: [], json: ["/secret"]))
        let text = String(decoding: redacted.responseBody, as: UTF8.self)
        #expect(text == "data: {\"secret\":\"[redacted]\",\"i\":1}\n\n: keep-alive\ndata: {\"i\":2}\n\n", "\(text)")
        let moved = redacted.chunks?.map(\.offset) ?? []
        #expect(moved.count == 3 && moved[0] == 0 && moved[2] == redacted.responseBody.count)
        #expect(moved[1] == redacted.responseBody.count - "data: {\"i\":2}\n\n".utf8.count)
        // NDJSON records alike; bytes are kept as they are.
        let ndjson = Self.stream("{\"secret\":1}\n{\"a\":2}\n", chunks: [.init(milliseconds: 0, offset: 0)], type: "application/x-ndjson")
        #expect(String(decoding: ndjson.redacted(by: Redaction(headers: [], query: [], json: ["/secret"])).responseBody, as: UTF8.self)
                == "{\"secret\":\"[redacted]\"}\n{\"a\":2}\n")
        let bytes = Self.stream("{\"secret\":1}", chunks: [.init(milliseconds: 0, offset: 0)], type: "application/octet-stream")
        #expect(bytes.redacted(by: Redaction(headers: [], query: [], json: ["/secret"])).responseBody == bytes.responseBody)
    }
}
