import Foundation
@testable import Proxy
import Testing

/// The stream stage alone: it arms the request for the upstream stage, except for HEAD; a
/// route with `stream.mode: off` has no stream stage.
@Suite struct StreamStageTests {
    static let routes = """
          - name: api
            match: { prefix: /api/ }
            upstream: {stub}
          - name: whole
            match: { prefix: /whole/ }
            upstream: {stub}
            stream: { mode: off }

        """

    @Test func itArmsTheRequestAndPassesOn() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, exchange) = try harness.context("/api/events", route: "api")
        #expect(try harness.run(StreamStage(), context).name == "passed")
        #expect(context.streamsVia != nil && context.stream == nil && exchange.replies.isEmpty)
        let (head, _) = try harness.context("/api/events", route: "api", method: "HEAD")
        #expect(try harness.run(StreamStage(), head).name == "passed")
        #expect(head.streamsVia == nil)
    }

    @Test func onlyRoutesThatMayStreamHaveTheStage() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stream-stage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let taped = Self.routes + "  - name: taped\n    match: { prefix: /taped/ }\n    upstream: {stub}\n    tape: { mode: record }\n"
        let harness = try StageHarness(routes: taped, top: "tapes: { dir: \(dir) }\n")
        #expect(try harness.stageNames("api") == ["RequestSerializationStage", "WebSocketStage", "StreamStage", "QueueStage", "UpstreamStage"])
        #expect(try harness.stageNames("whole") == ["RequestSerializationStage", "WebSocketStage", "QueueStage", "UpstreamStage"])
        // A taped route streams too: the tape records the stream with its timing.
        #expect(try harness.stageNames("taped").contains("StreamStage"))
    }
}
