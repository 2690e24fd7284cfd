@testable import Proxy
import Testing

/// The mock stage alone: a matching rule answers through the route's serializer; no
/// match passes the request on.
@Suite struct MockStageTests {
    static let routes = """
          - name: api
            match: { prefix: /api/ }
            upstream: {stub}
            mocks:
              - when: { method: GET, path: "refunds/*" }
                respond: { status: 202, json: { ok: true } }

        """

    @Test func aMatchingRuleAnswers() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, exchange) = try harness.context("/api/refunds/7", route: "api")
        #expect(try harness.runSerialized(MockStage(), context).name == "answered")
        #expect(context.source == .mock)
        #expect(exchange.status == 202 && exchange.text == #"{"ok":true}"#)
        #expect(exchange.replyHeader("Serializerd-Source") == "mock")
        #expect(harness.proxy.upstream.received.isEmpty)
    }

    @Test func noMatchPassesOn() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, exchange) = try harness.context("/api/orders/7", route: "api")
        #expect(try harness.runSerialized(MockStage(), context).name == "passed")
        #expect(context.source == .upstream && exchange.replies.isEmpty)
        #expect(try harness.stageNames("api") == ["RequestSerializationStage", "MockStage", "WebSocketStage", "StreamStage", "QueueStage", "UpstreamStage"])
    }
}
