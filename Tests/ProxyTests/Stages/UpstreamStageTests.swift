@testable import Proxy
import Testing

/// The upstream stage alone: the request it sends, and the answer `complete` makes of it.
@Suite struct UpstreamStageTests {
    static let routes = """
          - name: api
            match: { prefix: /api/ }
            upstream: {stub}
            headers: { X-Api-Key: k }

        """

    @Test func theRequestGoesUpstreamWithItsFieldsAndTheAnswerComesBack() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, exchange) = try harness.context("/api/echo?x=1", route: "api", headers: [("Accept", "application/json")])
        #expect(try harness.runSerialized(UpstreamStage(), context).name == "answered")
        let sent = try #require(harness.proxy.upstream.pending.first?.request)
        #expect(sent.url == "http://upstream.test/v1/echo?x=1")
        var fields: [String: String] = [:]
        sent.headers.forEach { fields[String(decoding: $0, as: UTF8.self)] = String(decoding: $1, as: UTF8.self) }
        #expect(fields["X-Api-Key"] == "k" && fields["Accept"] == "application/json")
        #expect(fields["X-Request-Id"] == "0123456789abcdef" && fields["Via"] == "1.1 serializerd-test")
        #expect(exchange.replies.isEmpty)
        harness.proxy.settle()
        #expect(exchange.status == 200 && exchange.replyHeader("Serializerd-Source") == "upstream")
        #expect(context.upstreamSeconds != nil && context.serializeSeconds != nil)
    }

    @Test func anUnreachableUpstreamIsAProblemDocument() throws {
        let harness = try StageHarness(routes: Self.routes)
        harness.proxy.upstream.down = true
        let (context, exchange) = try harness.context("/api/json", route: "api")
        #expect(try harness.runSerialized(UpstreamStage(), context).name == "answered")
        harness.proxy.settle()
        #expect(exchange.status == 502)
        #expect((exchange.replyJSON?["type"] as? String)?.hasSuffix("upstream-unavailable") == true)
    }
}
