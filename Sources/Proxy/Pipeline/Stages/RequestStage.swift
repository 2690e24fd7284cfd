import Cache

/// One step of a routed request on its way to an answer (DESIGN §1): network conditions,
/// the request serializer, mocks, the tape, the cache, the upstream. Each route builds its
/// list once, at load, of the steps it uses: a route without a cache has no cache stage.
/// The pipeline runs a request's stages in order until one answers, parks or refuses it.
protocol RequestStage: Sendable {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep
}

/// What a stage did with the request.
enum StageStep {
    /// Answered, or the answer is on its way (an upstream exchange in flight): the
    /// stages after this one do not run.
    case answered
    /// Not this stage's to answer: the next stage runs.
    case passed
    /// Waiting for something outside the request (another's cache miss); it runs this
    /// stage again when that happens (`RequestPipeline.resume`).
    case parked
    /// Refused: the problem document is the answer.
    case refused(ProxyFailure)
}

extension Route {
    /// The stages of this route, in the order they run (built by `Route.init`).
    static func stages(network: Bool, mocks: Bool, tape: RouteTape?, cache: CacheRule?, streams: Bool = false,
                       websockets: Bool = false) -> [any RequestStage] {
        var stages: [any RequestStage] = []
        if network { stages.append(NetworkStage()) }
        stages.append(RequestSerializationStage())
        if mocks { stages.append(MockStage()) }
        // A tape records and replays WebSockets too; the cache never sees one.
        if let tape { stages.append(TapeStage(tape: tape)) }
        if websockets { stages.append(WebSocketStage()) }
        if let cache { stages.append(CacheStage(rule: cache)) }
        if streams { stages.append(StreamStage()) }
        // Only what goes upstream waits (for the upstream's pause, a token, a slot): mocks,
        // replays and cache hits never do.
        stages.append(QueueStage())
        stages.append(UpstreamStage())
        return stages
    }
}
