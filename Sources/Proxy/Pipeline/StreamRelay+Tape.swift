import EventLoop
import HTTPCore
import Tapes
import Upstream

/// What a recording tape keeps of a stream (DESIGN §9): the body as received, and when
/// each piece came after the head, until the stream ends or `maxBytes` / `maxSeconds`
/// (the entry is written then; the stream goes on).
struct StreamRecording {
    static let maxBytes = 8 << 20
    static let maxSeconds = 300.0

    let request: UpstreamRequest
    /// Wall-clock seconds the request left (the entry's startedDateTime).
    let startedWall: Double
    var headAt = 0.0
    var head: UpstreamResponse?
    var body: [UInt8] = []
    var chunks: [StreamChunk] = []
    var written = false

    init(request: UpstreamRequest, startedWall: Double) {
        self.request = request
        self.startedWall = startedWall
    }

    /// Keeps one piece; false once the recording is full (its entry is due).
    mutating func keep(_ bytes: UnsafeRawBufferPointer, now: Double) -> Bool {
        guard !written else { return true }
        let elapsed = now - headAt
        guard body.count + bytes.count <= Self.maxBytes, elapsed <= Self.maxSeconds else { return false }
        chunks.append(StreamChunk(milliseconds: Int((elapsed * 1000).rounded()), offset: body.count))
        body.append(contentsOf: bytes)
        return true
    }
}

extension StreamRelay {
    /// The head of a recorded stream: its timing counts from here.
    func beginRecording(status: Int, headers: HeaderFields, now: Double) {
        guard context.streamRecording != nil else { return }
        context.streamRecording?.headAt = now
        context.streamRecording?.head = UpstreamResponse(status: status, headers: headers, contentType: headers.first("Content-Type"),
                                                         body: [], url: context.url)
    }

    func record(_ bytes: UnsafeRawBufferPointer, now: Double) {
        guard context.streamRecording != nil else { return }
        if context.streamRecording?.keep(bytes, now: now) == false { writeRecording(now: now) }
    }

    /// The recording becomes the tape's entry, once.
    func writeRecording(now: Double) {
        guard var recording = context.streamRecording, !recording.written, var reply = recording.head,
              let heard = context.upstreamAnswered else { return }
        recording.written = true
        context.streamRecording = recording
        reply.body = recording.body
        heard(recording.request, reply, recording.startedWall, now - context.upstreamSentAt, .init(chunks: recording.chunks))
        context.streamRecording?.body = []
    }
}

/// A recorded stream replayed into a `StreamRelay` (DESIGN §9): its pieces with their
/// recorded timing (`tape.timing: recorded`) or at once (`fast`), through today's
/// serializer, with the relay's backpressure. It lives until its last piece or the
/// relay's end.
final class StreamReplay {
    let relay: StreamRelay
    let reply: UpstreamResponse
    let chunks: [StreamChunk]
    let fast: Bool
    private var next = 0
    private var waiting = false
    private var started = 0.0
    private var timer: Timer?

    init(relay: StreamRelay, reply: UpstreamResponse, chunks: [StreamChunk], fast: Bool) {
        self.relay = relay
        self.reply = reply
        self.chunks = chunks
        self.fast = fast
    }

    /// Replays `reply` as the stream it was, when the route streams its kind; false when
    /// it does not (the recording is then answered whole).
    static func start(_ reply: UpstreamResponse, chunks: [StreamChunk], timing: RouteTape.Timing, _ context: RequestContext,
                      route: Route, in pipeline: RequestPipeline) -> Bool {
        guard context.request.method != "HEAD", route.stream.mode == .auto else { return false }
        var kind: StreamKind?
        _ = reply.headers.visitFirst(RequestContext.contentType) { kind = route.stream.kind(contentType: $0) }
        guard let kind else { return false }
        let relay = StreamRelay(context, route: route, pipeline: pipeline, kind: kind)
        let replay = StreamReplay(relay: relay, reply: reply, chunks: chunks, fast: timing == .fast)
        context.stream = relay
        context.streamReplay = replay
        context.upstreamSentAt = pipeline.clock.now()
        if route.response.acceptableStatusCodes?.contains(reply.status) ?? true {
            relay.start(status: reply.status, headers: reply.headers)
        } else {
            relay.collect(status: reply.status, headers: reply.headers)
        }
        replay.started = pipeline.clock.now()
        replay.deliver()
        return true
    }

    /// The pieces that are due, in order, until one must wait (its time, or the client).
    private func deliver() {
        let clock = relay.pipeline.clock
        while next < chunks.count {
            let due = started + Double(chunks[next].milliseconds) / 1000
            let wait = due - clock.now()
            if !fast, wait > 0.0005 {
                if timer == nil { timer = relay.pipeline.makeTimer?({ [weak self] in self?.deliver() }) }
                guard let timer else { break }
                return timer.schedule(after: wait)
            }
            let end = next + 1 < chunks.count ? chunks[next + 1].offset : reply.body.count
            let intake = reply.body[chunks[next].offset..<end].withUnsafeBytes { relay.received($0) }
            switch intake {
            case .taken: next += 1
            case .pause: return waiting = true
            case .stop: return stop()
            }
        }
        relay.upstreamEnded(.success(reply))
        stop()
    }

    /// The client took what waited.
    func resume() {
        guard waiting else { return }
        waiting = false
        deliver()
    }

    func stop() {
        timer?.cancel()
        timer = nil
        next = chunks.count
        if relay.context.streamReplay === self { relay.context.streamReplay = nil }
    }
}
