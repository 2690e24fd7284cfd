import EventLoop
import HTTPCore
import Network
import Serializers
import Telemetry
import Upstream

/// What a stream's timers and client callbacks call the relay through. A weak reference
/// would give the relay a side table, and every retain and release of it on an event's
/// path would take the runtime's slow road; the relay clears this as it goes.
final class StreamRelayLink {
    unowned(unsafe) var relay: StreamRelay?
}

/// One answer served as it arrives (DESIGN §9): SSE events and NDJSON records through
/// the route's serializer one by one, bytes untouched. It holds at most
/// `highWater` bytes for a slow client, then pauses the upstream transfer until the
/// client has taken them.
final class StreamRelay {
    /// Reply bytes waiting for the client before the upstream is paused.
    static let highWater = 256 << 10
    static let kernelSendBuffer: Int32 = 64 << 10

    /// Its request: the two refer to each other until the relay ends (`done`), which
    /// every path reaches: the upstream's end, the client's, idle time, a cut.
    let context: RequestContext
    let route: Route
    unowned let pipeline: RequestPipeline
    /// Held here, not reached through `context` and `pipeline` on each event: each step
    /// through a reference costs a retain and a release of an object not in the cache.
    let client: any ClientExchange
    let clock: PipelineClock
    let hub: EventHub
    let kind: StreamKind
    // Worker-thread only; a parser's callback writes `out`, never the parser it came from:
    // unchecked (the runtime checks cost ~4 % of an event's instructions).
    @exclusivity(unchecked) private var sse: EventStreamParser?
    @exclusivity(unchecked) private var records: RecordSplitter?
    var status = 0
    private var paused = false
    private var ended = false
    /// The client's head has left (latency may hold it).
    var open = false
    private var holdTimer: Timer?
    private var replyFields = HeaderFields()
    private var truncateAfter: Int?
    /// The stream ended while latency held its head: it ends once the head has gone.
    private var pendingEnd: (CompletionRecorder.Outcome, Bool)?
    /// Reading an unacceptable answer's body for its problem document, not streaming.
    private var collecting = false
    /// An event asked for the end (`on_invalid: close`): the stream ends after this read.
    var closing = false
    private var lastByte = 0.0
    /// While paused: the bytes waiting for the client, and since when they have not moved.
    private var stalledAt = (bytes: -1, since: 0.0)
    private var idleTimer: Timer?
    @exclusivity(unchecked) var out: [UInt8] = []
    /// `network.down` for this stream (bytes a second), and its pace so far.
    var downRate: Int?
    var paceStart = 0.0, paceSent = 0
    var paceTimer: Timer?
    /// The end of a paced stream, waiting for its last bytes to leave.
    var finishing: (CompletionRecorder.Outcome, Bool)?
    var events = 0, invalid = 0, dropped = 0, bytesOut = 0, bytesIn = 0
    /// The upstream's head, for the completion event.
    private var head: UpstreamResponse?
    /// The serializer passes event data as it is (`text`, `raw`).
    let passes: Bool
    let counters: StreamCounters?
    /// The last events, for the inspector (kept only while someone watches).
    var recentEvents: RecentEvents?
    /// What timers and the client's callbacks hold instead of the relay.
    let link = StreamRelayLink()

    init(_ context: RequestContext, route: Route, pipeline: RequestPipeline, kind: StreamKind) {
        self.context = context
        self.route = route
        self.pipeline = pipeline
        self.kind = kind
        client = context.request
        clock = pipeline.clock
        hub = pipeline.shared.hub
        passes = route.response.serializer == .text || route.response.serializer == .raw
        counters = pipeline.telemetry.metrics.stream(route: route.name, kind: kind.name)
        link.relay = self
    }

    deinit { link.relay = nil }

    /// A streaming content type with an unacceptable status: the problem document is made
    /// from what arrives within `stream.idle`, at most `collectLimit` bytes (an error
    /// stream may never end).
    func collect(status: Int, headers: HeaderFields) {
        self.status = status
        collecting = true
        head = UpstreamResponse(status: status, headers: headers, contentType: headers.first("Content-Type"), body: [], url: context.url)
        if let timer = pipeline.makeTimer?({ [link] in link.relay?.answerCollected() }) {
            idleTimer = timer
            timer.schedule(after: route.stream.idle)
        }
    }

    static let collectLimit = 64 << 10

    /// The collected body answered as any whole answer is (the serializer, the problem).
    private func answerCollected(_ failure: UpstreamFailure? = nil) {
        guard !ended, var answer = head else { return }
        ended = true
        idleTimer?.cancel()
        idleTimer = nil
        answer.body = out
        out = []
        context.upstreamSeconds = clock.now() - context.upstreamSentAt
        // A recording tape keeps the error answer whole, as any other.
        if failure == nil, let recording = context.streamRecording, let heard = context.upstreamAnswered {
            heard(recording.request, answer, recording.startedWall, context.upstreamSeconds ?? 0, .whole)
        }
        pipeline.complete(failure.map { .failure($0) } ?? .success(answer), context)
        if let task = context.upstreamTask { pipeline.session.cancel(task) }
        done()
    }

    /// The upstream's head was validated: the client's head leaves now.
    func start(status: Int, headers: HeaderFields) {
        counters?.opened()
        let now = clock.now()
        context.upstreamSeconds = now - context.upstreamSentAt
        self.status = status
        lastByte = now
        let contentType = headers.first("Content-Type")
        head = UpstreamResponse(status: status, headers: headers, contentType: contentType, body: [], url: context.url)
        beginRecording(status: status, headers: headers, now: now)
        switch kind {
        case .sse: sse = EventStreamParser(maxEvent: route.stream.maxMessage)
        case .ndjson(let sequence): records = RecordSplitter(maxRecord: route.stream.maxMessage, sequence: sequence)
        case .bytes: break
        }
        if let cached = context.cached {
            context.cache = .init(result: .bypass, status: "serializerd; fwd=bypass; detail=stream")
            // Waiting requests need not wait for a stream's end: nothing will be stored.
            if cached.leads {
                pipeline.cache.misses.finish(cached.key)
                context.cached?.leads = false
            }
        }
        replyFields = replyHead(contentType: contentType, now: now)
        if let timer = pipeline.makeTimer?({ [link] in link.relay?.idleCheck() }) {
            idleTimer = timer
            timer.schedule(after: route.stream.idle)
        }
        guard let shaping = context.network?.shaping else { return openClient() }
        applyConditions(shaping)
    }

    /// Network conditions (DESIGN §9): a reset instead of the head, a cut after a seeded
    /// number of events, latency before the head.
    private func applyConditions(_ shaping: ReplyShaping) {
        switch shaping.ending {
        case .reset:
            ended = true
            counters?.closed()
            idleTimer?.cancel()
            if let task = context.upstreamTask { pipeline.session.cancel(task) }
            done()
            // The writer resets the connection without a reply and records the fault.
            return context.reply.problem(.unavailable, route: route.name)
        case .truncate:
            truncateAfter = pipeline.drawStreamCut(route)
        case .whole:
            break
        }
        downRate = shaping.bytesPerSecond
        guard shaping.delay > 0, let timer = pipeline.makeTimer?({ [link] in link.relay?.openClient() }) else { return openClient() }
        holdTimer = timer
        timer.schedule(after: shaping.delay)
    }

    /// The client's head leaves, and what arrived while it was held.
    private func openClient() {
        guard !ended else { return }
        holdTimer = nil
        let started = client.startStream(status: status, headers: replyFields, sendBuffer: Self.kernelSendBuffer,
                                                  onDrained: { [link] in link.relay?.drained() },
                                                  onClose: { [link] in link.relay?.clientLeft() })
        guard started else { return clientLeft() }
        open = true
        flush()
        truncateIfDue()
        if let (outcome, cut) = pendingEnd {
            pendingEnd = nil
            finish(outcome: outcome, cut: cut)
        }
    }

    /// The request lets its relay go: nothing refers to it after this but a caller's own
    /// reference (the connection's and the timers' callbacks hold its link).
    private func done() {
        context.stream = nil
        context.streamReplay?.stop()
    }

    /// `network` truncate: the stream is cut once the drawn number of events has gone.
    private func truncateIfDue() {
        guard let limit = truncateAfter, events >= limit, open else { return }
        finish(outcome: .init(label: "injected_fault", serializer: route.response.serializer.rawValue,
                              error: "the stream was cut after \(limit) events by an injected fault"), cut: true)
    }

    func received(_ bytes: UnsafeRawBufferPointer) -> StreamIntake {
        guard !ended else { return .stop }
        if collecting {
            out.append(contentsOf: bytes.prefix(Self.collectLimit - out.count))
            guard out.count >= Self.collectLimit else { return .taken }
            answerCollected()
            return .stop
        }
        // What waits here (a held head, a pace) counts as what the client has not taken.
        if paused || client.bufferedBytes + out.count >= Self.highWater {
            if !paused { stalledAt = (client.bufferedBytes, clock.now()) }
            paused = true
            return .pause
        }
        lastByte = clock.now()
        bytesIn += bytes.count
        record(bytes, now: lastByte)
        switch kind {
        case .sse:
            sse?.feed(bytes) { handle($0) }
        case .ndjson:
            records?.feed(bytes) { handle(record: $0) }
        case .bytes:
            out.append(contentsOf: bytes)
        }
        flush()
        truncateIfDue()
        if ended { return .stop }
        if closing {
            finish(outcome: .init(label: "invalid_event", serializer: route.response.serializer.rawValue,
                                  error: "an event the serializer refused ended the stream (stream.on_invalid: close)"), cut: false)
            return .stop
        }
        return .taken
    }

    // MARK: the end

    /// The upstream transfer ended (its completion): the stream ends with it.
    func upstreamEnded(_ result: Result<UpstreamResponse, UpstreamFailure>) {
        guard !ended else { return }
        if collecting {
            if case .failure(let failure) = result { return answerCollected(failure) }
            return answerCollected()
        }
        switch result {
        case .success:
            if case .ndjson = kind { records?.finish { handle(record: $0) } }
            sse?.finish()
            flush()
            finish(outcome: .init(label: "ok", serializer: route.response.serializer.rawValue), cut: false)
        case .failure(let failure):
            let shown = pipeline.config.capture.url(context.url)
            let problem: ProxyFailure = switch failure {
            case .timeout: .upstreamTimeout(url: shown, seconds: route.stream.idle, streamIdle: true)
            case .unavailable(let code, let message): .upstreamUnavailable(curlCode: code, message: message, url: shown)
            default: .unavailable
            }
            failMidStream(problem)
        }
    }

    /// No upstream byte for `stream.idle` ends the stream. A paused transfer is not idle:
    /// it waits for the client, which is dropped when it takes nothing of what waits for
    /// `timeouts.client_idle`.
    private func idleCheck() {
        guard !ended else { return }
        let now = clock.now()
        if paused {
            let waiting = client.bufferedBytes
            if waiting != stalledAt.bytes { stalledAt = (waiting, now) }
            let clientIdle = pipeline.config.timeouts.clientIdle
            if now - stalledAt.since >= clientIdle {
                return finish(outcome: .init(label: "client_gone", serializer: route.response.serializer.rawValue,
                                             error: "the client took nothing of the stream for \(ProxyFailure.seconds(clientIdle)) s (timeouts.client_idle)"),
                              cut: true, status: CompletionRecorder.clientGoneStatus)
            }
            idleTimer?.schedule(after: min(route.stream.idle, clientIdle) / 2)
            return
        }
        let quiet = now - lastByte
        if quiet < route.stream.idle {
            idleTimer?.schedule(after: route.stream.idle - quiet)
            return
        }
        failMidStream(.upstreamTimeout(url: pipeline.config.capture.url(context.url), seconds: route.stream.idle, streamIdle: true))
    }

    /// SSE ends with a `serializerd-error` event naming the failure; NDJSON and bytes are
    /// cut (no last chunk), so the client never takes a short stream for a whole one.
    private func failMidStream(_ problem: ProxyFailure) {
        let cut = kind != .sse
        if !cut {
            appendErrorEvent(ProblemDocument.render(problem, route: route.name, requestID: context.requestID))
            flush()
        }
        finish(outcome: .init(label: problem.outcomeLabel, serializer: route.response.serializer.rawValue,
                              error: problem.detail ?? problem.title), cut: cut)
    }

    private func clientLeft() {
        guard !ended else { return }
        finish(outcome: .init(label: "client_gone", serializer: route.response.serializer.rawValue,
                              error: "the client closed the connection during the stream"), cut: true, status: CompletionRecorder.clientGoneStatus)
    }

    /// The pace allows more: it leaves, and a paused upstream resumes once half has gone.
    func paceTick() {
        guard !ended, open else { return }
        flush()
        if out.isEmpty, let (outcome, cut) = finishing {
            finishing = nil
            return finish(outcome: outcome, cut: cut)
        }
        if out.count + client.bufferedBytes < Self.highWater / 2 { drained() }
    }

    private func drained() {
        guard paused, !ended, open, out.count + client.bufferedBytes < Self.highWater / 2 || downRate == nil else { return }
        paused = false
        if let task = context.upstreamTask { pipeline.session.resume(task) } else { context.streamReplay?.resume() }
    }

    /// Ends the reply (cleanly or cut), stops the upstream transfer and records the
    /// request's one completion event.
    private func finish(outcome: CompletionRecorder.Outcome, cut: Bool, status: Int? = nil) {
        guard !ended, !collecting else { return }
        if !open, holdTimer != nil, status == nil {
            pendingEnd = (outcome, cut)
            return
        }
        // A paced stream that ends whole ends once its last bytes have left at the pace.
        if !cut, status == nil, open, !out.isEmpty, downRate != nil {
            finishing = (outcome, cut)
            if let task = context.upstreamTask { pipeline.session.cancel(task) }
            return
        }
        ended = true
        defer { done() }
        counters?.closed()
        holdTimer?.cancel()
        holdTimer = nil
        paceTimer?.cancel()
        paceTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        if let task = context.upstreamTask { pipeline.session.cancel(task) }
        var outcome = outcome
        outcome.reply = head
        outcome.upstreamBytes = bytesIn
        if cut { client.abortStream() } else { client.endStream() }
        let now = clock.now()
        let duration = now - context.started
        writeRecording(now: now)
        pipeline.publishStreamEvents(recentEvents, context, kind: kind.name)
        context.streamSummary = summary(duration: duration)
        context.recorder.record(context, status: status ?? self.status, bytesOut: bytesOut, outcome: outcome, duration: duration,
                                responseContentType: nil)
    }

    /// What `/-/inflight` and progress events show of an open stream; nil while it is not
    /// one (an error answer being read).
    var summarySoFar: String? {
        collecting || ended ? nil : summary(duration: clock.now() - context.started)
    }

    private func summary(duration: Double) -> String {
        "{\"kind\":\"\(kind.name)\",\"events\":\(events),\"invalid\":\(invalid),\"dropped\":\(dropped),"
            + "\"bytes\":\(bytesOut),\"duration_ms\":\(Int((duration * 1000).rounded()))}"
    }
}
