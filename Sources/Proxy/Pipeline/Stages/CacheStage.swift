import Cache

/// The route's `cache:` (DESIGN §3): a stored answer served, an unsatisfiable request
/// refused, or the exchange the upstream's answer will be stored from. A miss whose key
/// is already being fetched parks here and runs this stage again once that answer is in.
struct CacheStage: RequestStage {
    let rule: CacheRule

    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        switch pipeline.consultCache(rule, context, route: route) {
        case .answered: return .answered
        case .parked: return .parked
        case .forward(let exchange):
            context.cached = exchange
            return .passed
        }
    }
}
