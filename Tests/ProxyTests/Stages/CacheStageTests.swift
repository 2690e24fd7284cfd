@testable import Proxy
import Testing

/// The cache stage alone: a miss passes on with the exchange to store from, a second
/// miss on the same key parks and comes back to the stored answer, a hit answers.
@Suite struct CacheStageTests {
    /// Counts its runs, then does the request serializer's work.
    final class Counter: @unchecked Sendable { var runs = 0 }
    struct CountingStage: RequestStage {
        let counter: Counter
        func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
            counter.runs += 1
            return RequestSerializationStage().run(context, route: route, in: pipeline)
        }
    }

    @Test func aMissLeadsASecondParksAndResumesAtTheCacheStage() throws {
        let harness = try StageHarness(routes: cacheRoute())
        let route = try harness.route("api")
        let counter = Counter()
        let stages: [any RequestStage] = [CountingStage(counter: counter), CacheStage(rule: try #require(route.cache)), UpstreamStage()]
        let target = try #require(RequestTarget("/api/cached/k"))
        let (first, firstExchange) = try harness.context("/api/cached/k", route: "api")
        first.routed(to: route, stages: stages, target: target)
        harness.pipeline.proceed(first, route: route)
        #expect(first.cached?.leads == true && first.cached?.store == true && first.stage == 2)
        let (second, secondExchange) = try harness.context("/api/cached/k", route: "api")
        second.routed(to: route, stages: stages, target: target)
        harness.pipeline.proceed(second, route: route)
        #expect(second.stage == 1 && secondExchange.replies.isEmpty)
        #expect(harness.proxy.upstream.pending.count == 1)

        harness.proxy.settle()
        #expect(firstExchange.status == 200)
        #expect(firstExchange.replyHeader("Cache-Status") == "serializerd; fwd=uri-miss; fwd-status=200; stored")
        // Woken, the second ran the cache stage again, not the stages before it.
        #expect(second.woken && counter.runs == 2)
        #expect(secondExchange.replyHeader("Cache-Status") == "serializerd; hit; collapsed")
        #expect(harness.proxy.requests("k") == 1)
    }

    @Test func aStoredAnswerIsAHit() throws {
        let harness = try StageHarness(routes: cacheRoute())
        harness.proxy.get("/api/cached/h")
        let (context, exchange) = try harness.context("/api/cached/h", route: "api")
        #expect(try harness.runSerialized(CacheStage(rule: try #require(harness.route("api").cache)), context).name == "answered")
        #expect(context.source == .cache && exchange.replyHeader("Cache-Status") == "serializerd; hit")
        #expect(harness.proxy.requests("h") == 1)
        #expect(try harness.stageNames("api") == ["RequestSerializationStage", "WebSocketStage", "CacheStage", "StreamStage", "QueueStage", "UpstreamStage"])
    }
}
