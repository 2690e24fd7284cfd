@testable import Proxy
import Testing

/// The request serializer's stage alone: the upstream URL and body it leaves on the
/// context, and what it refuses.
@Suite struct RequestSerializationStageTests {
    static let routes = """
          - name: api
            match: { prefix: /api/ }
            upstream: {stub}
          - name: json
            match: { prefix: /j/ }
            upstream: {stub}
            request: { serializer: json }

        """

    @Test func thePathPastThePrefixAndTheQueryMakeTheURL() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, _) = try harness.context("/api/items/7?b=2&a=1", route: "api")
        #expect(try harness.run(RequestSerializationStage(), context).name == "passed")
        #expect(context.upstreamURL == "http://upstream.test/v1/items/7?b=2&a=1")
        #expect(context.upstreamSent?.body == [])
    }

    @Test func aPathLeavingTheUpstreamBaseIsRefused() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, _) = try harness.context("/api/..%2F..%2Fadmin", route: "api")
        #expect(try harness.run(RequestSerializationStage(), context).name == "refused invalid-path")
        #expect(context.upstreamURL == nil)
    }

    @Test func aBodyTheSerializerCannotReadIsABadRequest() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, _) = try harness.context("/j/x", route: "json", method: "POST",
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array("a=%zz".utf8))
        let step = try harness.run(RequestSerializationStage(), context)
        #expect(step.name == "refused bad-request")
    }
}
