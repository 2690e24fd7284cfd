/// Arms streaming (DESIGN §9): the upstream stage sends the request with a relay, which
/// takes the answer as it arrives when its head says it streams; any other answer
/// takes the ordinary path.
struct StreamStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        if context.request.method != "HEAD" { context.stream = StreamRelay(context, route: route, pipeline: pipeline) }
        return .passed
    }
}
