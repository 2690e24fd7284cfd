import HTTPCore
import Tapes
import Tracing

/// The route's `mocks:`, tried in order (DESIGN §2): the first that matches answers in
/// the upstream's place, through the route's response serializer.
struct MockStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        let request = context.request
        let asked = MockRequest(method: request.method, path: String(context.remainder), query: context.query, fields: request.fields)
        let started = context.sampledTrace == nil ? 0 : pipeline.clock.now()
        let answer = Mocks.answer(route.mocks, asked, maxBytes: pipeline.config.limits.maxResponseBody)
        if let trace = context.sampledTrace {
            var matched = false
            if case .answer = answer { matched = true }
            trace.child("mock", id: pipeline.traceIDs.next(), from: started, to: pipeline.clock.now(),
                        attributes: [SpanAttribute("serializerd.mock.matched", matched)])
        }
        switch answer {
        case .answer(let answer, _):
            context.source = .mock
            pipeline.complete(.success(UpstreamResponse(status: answer.status, fields: answer.headers, body: answer.body, url: context.url)),
                              context)
            return .answered
        case .escapes(let why):
            return .refused(.invalidPath(why))
        case .none:
            return .passed
        }
    }
}
