import Cache
import Tracing

/// The route's `cache:` (DESIGN §3): a stored answer served, an unsatisfiable request
/// refused, or the exchange the upstream's answer will be stored from. A miss whose key
/// is already being fetched parks here and runs this stage again once that answer is in.
struct CacheStage: RequestStage {
    let rule: CacheRule

    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        context.sampledTrace?.begin("cache", id: pipeline.traceIDs.next(), at: pipeline.clock.now())
        let step = pipeline.consultCache(rule, context, route: route)
        if let trace = context.sampledTrace {
            let result: String
            switch step {
            case .answered: result = Self.spanResult(context)
            case .parked: result = "collapsed"
            case .forward(let exchange): result = exchange.result.rawValue
            }
            trace.end(at: pipeline.clock.now(), attributes: [SpanAttribute("serializerd.cache", result)])
        }
        switch step {
        case .answered: return .answered
        case .parked: return .parked
        case .forward(let exchange):
            context.cached = exchange
            return .passed
        }
    }

    /// How the cache met a request it answered, for its span.
    static func spanResult(_ context: RequestContext) -> String { context.cache?.result.rawValue ?? "hit" }
}
