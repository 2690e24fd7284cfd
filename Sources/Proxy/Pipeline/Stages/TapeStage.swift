import HTTPCore
import Tapes
import Tracing

/// The route's tape (DESIGN §2): a recorded answer replays in the upstream's place (its
/// output kept from the last time the route made it); a recording tape hears the
/// upstream's answer once it comes.
struct TapeStage: RequestStage {
    let tape: RouteTape

    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        guard let trace = context.sampledTrace else { return consult(context, route: route, in: pipeline) }
        trace.begin("tape", id: pipeline.traceIDs.next(), at: pipeline.clock.now())
        let step = consult(context, route: route, in: pipeline)
        var error: String?
        if case .refused = step { error = "no recording matches the request" }
        trace.end(at: pipeline.clock.now(), attributes: Self.spanAttributes(tape, context), error: error)
        return step
    }

    /// The tape span's attributes: the mode, and whether a recording answered.
    static func spanAttributes(_ tape: RouteTape, _ context: RequestContext) -> [SpanAttribute] {
        [SpanAttribute("serializerd.tape.mode", tape.mode.rawValue), SpanAttribute("serializerd.tape.replayed", context.source == .tape)]
    }

    private func consult(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        // The upstream fields only when matching or recording reads them: a replay that
        // needs none costs no more than its answer.
        let fields = tape.records || tape.tape.matchReadsHeaders ? pipeline.upstreamFields(context, route: route) : nil
        context.upstreamSent?.lines = fields?.bytes ?? []
        if tape.replays {
            let asked = TapeRequest(method: context.request.method, url: context.url, headers: fields ?? HeaderFields(),
                                    body: context.serialized.body)
            if let replayed = tape.tape.replay(asked) {
                replay(replayed, context, route: route, in: pipeline)
                return .answered
            }
            if tape.mode == .replay { return .refused(.replayMiss(tape.tape.missDetail(asked))) }
        }
        if tape.records {
            let recording = tape.tape
            context.upstreamAnswered = { [unowned pipeline] request, reply, started, seconds, timing in
                pipeline.record(request, reply: reply, into: recording, started: started, seconds: seconds, timing: timing)
            }
        }
        return .passed
    }

    private func replay(_ replayed: Tape.Replayed, _ context: RequestContext, route: Route, in pipeline: RequestPipeline) {
        context.source = .tape
        if let messages = replayed.messages { return replayWebSocket(replayed, messages: messages, context, route: route, in: pipeline) }
        let reply = UpstreamResponse(status: replayed.status, headers: HeaderFields(lines: replayed.headerLines),
                                     contentType: replayed.contentType, body: replayed.body, url: context.url)
        if let chunks = replayed.chunks, StreamReplay.start(reply, chunks: chunks, timing: tape.timing, context, route: route, in: pipeline) {
            return
        }
        // The route made the same of these bytes before: its output, kept.
        let owner = ObjectIdentifier(route), tape = tape.tape
        if let served = tape.served(replayed.entry, owner: owner) {
            return pipeline.complete(.success(reply), context, serialized: (served.result, served.unsafeNumbers))
        }
        pipeline.complete(.success(reply), context) { result, unsafe in
            tape.keep(Tape.Served(owner: owner, result: result, unsafeNumbers: unsafe), for: replayed.entry)
        }
    }

    /// A recorded WebSocket: the handshake is checked as a relay checks it, then answered here.
    private func replayWebSocket(_ replayed: Tape.Replayed, messages: [WebSocketMessage], _ context: RequestContext, route: Route,
                                 in pipeline: RequestPipeline) {
        switch WebSocketStage.check(context, route: route) {
        case .valid(let key, let client):
            WebSocketReplay.start(context, route: route, in: pipeline, key: key, client: client,
                                  recorded: HeaderFields(lines: replayed.headerLines), messages: messages, timing: tape.timing)
        case .answered:
            break
        case .refused(let failure):
            context.reply.problem(failure, route: route.name)
        case .notWebSocket:
            context.reply.problem(.webSocketHandshake("the recording matched is a WebSocket: only its handshake replays it"), route: route.name)
        }
    }
}
