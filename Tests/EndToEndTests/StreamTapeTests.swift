import Foundation
import TestSupport
import Testing

/// A stream recorded on a tape, then replayed with the upstream gone (DESIGN §9): the
/// entry keeps the stream as received and its timing; replay sends it through today's
/// serializer, with that timing or at once.
@Suite(.timeLimit(.minutes(5)))
struct StreamTapeTests {
    @Test func anSSEStreamIsRecordedThenReplayedWithItsTiming() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stream-tape-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\ncapture: { redact_json: [/secret] }\n"
        let recording = try StreamTests.harness(extra: "    tape: { mode: record }\n", top: top)
        let reader = try StreamTests.Reader(recording, "/live/sse?n=4&gap=0.3&kind=secret")
        #expect(reader.wait { text, ended in StreamTests.dataLines(text).count == 4 && ended })
        #expect(recording.finish() == 0)
        // The entry: the stream as received, redacted line by line, and its timing.
        let har = try String(contentsOfFile: dir + "/live.har", encoding: .utf8)
        #expect(har.contains("\"_serializerd\":{\"chunks\":[[") && har.contains("[redacted]") && !har.contains("hunter2"), "\(har.prefix(2000))")
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/live.har")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        for (timing, spread) in [("recorded", 0.7...3.0), ("fast", 0.0...0.25)] {
            // The upstream is gone: nothing listens on port 9.
            let routes = "  - name: live\n    match: { prefix: /live/ }\n    upstream: http://127.0.0.1:9/v1\n"
                + "    tape: { mode: replay, timing: \(timing) }\n    response: { remove_null_values: true }\n"
            let replaying = try ProxyHarness(routes: routes, top: top, script: "stream_upstream.py")
            defer { replaying.finish() }
            let replay = try StreamTests.Reader(replaying, "/live/sse?n=4&gap=0.3&kind=secret")
            var arrivals: [Date] = []
            #expect(replay.wait { text, ended in
                let count = StreamTests.dataLines(text).count
                while arrivals.count < count { arrivals.append(Date()) }
                return count == 4 && ended
            })
            #expect(replay.head.contains("Serializerd-Source: tape") && replay.head.contains("text/event-stream"), "\(replay.head)")
            let lines = StreamTests.dataLines(replay.body.text)
            // Today's serializer: remove_null_values applies now, the redaction stays.
            #expect(lines.count == 4 && lines.allSatisfy { !$0.contains("null") && $0.contains("\"secret\":\"[redacted]\"") }, "\(lines)")
            let took = arrivals.count == 4 ? arrivals[3].timeIntervalSince(arrivals[0]) : -1
            #expect(spread.contains(took), "\(timing): \(took) s")
        }
    }

    @Test func aTimingOtherThanRecordedOrFastIsAConfigError() throws {
        let run = try checkRoute("tape", "{ mode: replay, timing: slow }")
        #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains("expected recorded or fast, found 'slow'"), "\(run.stderrText)")
    }
}
