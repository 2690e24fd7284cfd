import Tracing

/// The route's network conditions and an admin client's fault headers (DESIGN §3): the
/// plan noted on the context, and a fault that needs no upstream answered here.
struct NetworkStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        if let failure = pipeline.planNetwork(context, route: route) { return .refused(failure) }
        if let trace = context.sampledTrace, let applied = context.network?.appliedText {
            trace.event("fault", at: pipeline.clock.now(), [SpanAttribute("serializerd.faults", applied)])
        }
        switch context.network?.fault {
        case .status(let status):
            return .refused(.injectedFault(status: status, detail: "status=\(status) from the route's network conditions or a Serializerd-Fault header"))
        case .timeout:
            return .refused(.upstreamTimeout(url: nil, seconds: route.timeout))
        case .reset:
            // Never sent: the connection is reset instead.
            return .refused(.unavailable)
        case .truncate, nil:
            return .passed
        }
    }
}
