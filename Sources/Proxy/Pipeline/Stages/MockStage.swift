import HTTPCore
import Tapes

/// The route's `mocks:`, tried in order (DESIGN §2): the first that matches answers in
/// the upstream's place, through the route's response serializer.
struct MockStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        let request = context.request
        let asked = MockRequest(method: request.method, path: String(context.remainder), query: context.query, fields: request.fields)
        switch Mocks.answer(route.mocks, asked, maxBytes: pipeline.config.limits.maxResponseBody) {
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
