import Foundation
@testable import Proxy
import Testing

/// The tape stage alone: a replay tape answers or refuses a miss; a recording tape
/// passes the request on and hears the upstream's answer.
@Suite struct TapeStageTests {
    static func routes(_ mode: String) -> String {
        "  - name: api\n    match: { prefix: /api/ }\n    upstream: {stub}\n    tape: { mode: \(mode) }\n"
    }

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tape-stage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aRecordingTapeHearsTheUpstreamAnswer() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let harness = try StageHarness(routes: Self.routes("record"), top: "tapes: { dir: \(dir) }\n")
        let (context, exchange) = try harness.context("/api/json", route: "api")
        let step = try harness.runSerialized(TapeStage(tape: try #require(harness.route("api").tape)), context)
        #expect(step.name == "passed" && context.upstreamAnswered != nil)
        // The fields a recording keeps are the ones the upstream is sent.
        let lines = String(decoding: context.upstreamSent?.lines ?? [], as: UTF8.self)
        #expect(lines.contains("X-Request-Id: 0123456789abcdef"))
        #expect(try harness.run(UpstreamStage(), context).name == "answered")
        harness.proxy.settle()
        #expect(exchange.status == 200)
        #expect(try harness.route("api").tape?.tape.count == 1)
    }

    @Test func aReplayTapeAnswersWhatItRecordedAndRefusesAMiss() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\n"
        let recorder = try StageHarness(routes: Self.routes("record"), top: top)
        recorder.proxy.get("/api/json")
        try #require(recorder.proxy.state.tapes.flush().isEmpty)

        let harness = try StageHarness(routes: Self.routes("replay"), top: top)
        let tape = try #require(harness.route("api").tape)
        let (hit, exchange) = try harness.context("/api/json", route: "api")
        #expect(try harness.runSerialized(TapeStage(tape: tape), hit).name == "answered")
        #expect(hit.source == .tape && exchange.status == 200 && exchange.replyHeader("Serializerd-Source") == "tape")
        let (miss, _) = try harness.context("/api/other", route: "api")
        #expect(try harness.runSerialized(TapeStage(tape: tape), miss).name == "refused replay-miss")
        #expect(harness.proxy.upstream.received.isEmpty)
    }
}
