import Cache
import EventLoop
import HTTPCore
import Resilience
import Serializers
import Tapes
import Telemetry
import Upstream

/// One request's state from the moment it is read to its one reply: who asked and what,
/// the route it matched, what each stage decided (source, cache, faults, tape), the
/// timings, and where the completion event goes. Every stage and callback of the request
/// holds this one object; `reply` builds and sends the answer from it.
///
/// Only the worker that read the request touches it, each access a single statement: the
/// fields written in place through optional chains skip the runtime exclusivity check
/// (it cost more than the write).
final class RequestContext {
    let request: any ClientExchange
    let requestID: String
    let started: Double
    let startedWall: Double
    let clock: PipelineClock
    let recorder: CompletionRecorder
    /// The route label for telemetry: the route's name once one matched.
    var label = RouteLabel.unmatched
    /// The request's path, without the query.
    var path: String

    // MARK: routed

    /// The route it matched, and the stages it runs (fixed when it was routed: a reload
    /// does not change a request in flight).
    private(set) var route: Route?
    private(set) var stages: [any RequestStage] = []
    /// The next stage to run; a parked stage runs again from here.
    var stage = 0
    /// The query of the request-target, and the path past the route's prefix.
    private(set) var query: String?
    private(set) var remainder: Substring = ""
    /// What the route's request serializer made, and the upstream URL.
    @exclusivity(unchecked) var serialized = SerializedRequest(query: nil, contentType: nil, body: [])
    var upstreamURL: String?
    var url: String { upstreamURL ?? "" }
    /// The upstream request fields, made once when a stage needs them.
    @exclusivity(unchecked) var upstreamFields: HeaderFields?
    /// The request waited for another's cache miss and runs its stage again.
    var woken = false
    /// The route gate's slot this request holds (`limits`), given back when its upstream
    /// exchange ends.
    var gateSlot: UpstreamGate?
    /// Past the route's throttle (the upstream's pause, `limits.rate`), and when it began
    /// to wait in the route's queue (nil: it never waited).
    var throttled = false
    var queuedAt: Double?
    /// How long it waited there, once it left the queue.
    var queueSeconds: Double?
    /// `retry`: the attempts so far, when the first left, the time before the last began,
    /// and the timer of the wait before the next.
    var attempts = 1
    var firstSentAt: Double?
    var retrySeconds: Double?
    var retryTimer: Timer?
    /// `breaker`: this request's outcome feeds the route's breaker (it was admitted), and
    /// whether it went as the half-open probe.
    var breakerCounts = false
    var breakerProbe = false
    /// Its trace, while `tracing:` is on (DESIGN §12).
    var trace: RequestTrace?
    /// Its trace when its spans are recorded: what stages that only record spans and
    /// events read, so that a request not sampled pays for none of them.
    var sampledTrace: RequestTrace? {
        guard let trace, trace.sampled else { return nil }
        return trace
    }

    // MARK: what the stages decided

    /// Where the payload came from (`Serializerd-Source`, DESIGN §3).
    var source = Source.upstream
    /// On caching routes: how the cache met the request (`Cache-Status`, DESIGN §3), and
    /// the exchange the cache stage began.
    var cache: CacheNote?
    @exclusivity(unchecked) var cached: CacheExchange?
    /// Whether the upstream's Set-Cookie reaches the client (`cookies: pass`, the default).
    var passesCookies = true
    /// What the route's network conditions do to this request (DESIGN §3).
    @exclusivity(unchecked) var network: NetworkPlan?
    /// Heard when the upstream answers (a recording tape): the request sent, the answer,
    /// when it left (wall clock) and how long it took.
    var upstreamAnswered: ((UpstreamRequest, UpstreamResponse, Double, Double, RecordedTiming) -> Void)?
    /// The request serializerd sent upstream (or would have: a tape or a mock answered),
    /// for the full HAR.
    @exclusivity(unchecked) var upstreamSent: UpstreamSent?

    // MARK: timings and findings

    var upstreamSeconds: Double?
    var serializeSeconds: Double?
    /// Unsafe numbers the route's output.numbers found in the payload.
    var unsafeNumbers: Int?
    /// How many ways the answer broke the route's contract (nil: no contract, or met).
    var contractViolations: Int?
    /// Set by the stream stage: the answer may stream (DESIGN §9), through this pipeline.
    var streamsVia: RequestPipeline?
    /// The answer streams: what serves it.
    var stream: StreamRelay?
    /// The upstream transfer of a request that may stream, and when it was sent.
    var upstreamTask: UpstreamTask?
    var upstreamSentAt = 0.0
    /// A recording tape's stream: what it has kept so far (set when the request is sent).
    @exclusivity(unchecked) var streamRecording: StreamRecording?
    /// A recorded stream being replayed into `stream`.
    var streamReplay: StreamReplay?
    /// A recorded WebSocket being replayed.
    var webSocketReplay: WebSocketReplay?
    /// The request became a WebSocket: what relays it.
    var webSocket: WebSocketRelay?
    /// The completion event's `stream` object, once a stream has ended.
    var streamSummary: String?

    /// How an answer arrived over time, for its tape entry: a stream's chunks, a
    /// WebSocket's messages; neither for a whole answer.
    struct RecordedTiming {
        var chunks: [StreamChunk]?
        var messages: [WebSocketMessage]?

        static let whole = RecordedTiming()
    }

    struct CacheNote {
        var result: CacheResult
        /// The `Cache-Status` field value.
        var status: String
    }

    enum Source: String {
        case upstream, tape, mock, cache
    }

    struct UpstreamSent {
        /// `Name: value` lines, each ended by CRLF (HeaderFields' bytes).
        var lines: [UInt8]
        var body: [UInt8]
    }

    init(request: any ClientExchange, requestID: String, recorder: CompletionRecorder, clock: PipelineClock, path: String) {
        self.request = request
        self.requestID = requestID
        self.recorder = recorder
        self.path = path
        self.clock = clock
        started = clock.now()
        startedWall = clock.wall()
    }

    /// Builds and sends this request's answer.
    var reply: ResponseWriter { ResponseWriter(self) }

    /// Matched: the route, its stages, and the target's parts the stages read.
    func routed(to route: Route, stages: [any RequestStage], target: RequestTarget) {
        self.route = route
        self.stages = stages
        label = route.name
        query = target.query
        remainder = route.remainder(of: target.path)
        passesCookies = route.cookies == nil
    }
}
