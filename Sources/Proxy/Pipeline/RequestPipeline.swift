import Cache
import EventLoop
import HTTPCore
import Network
import Serializers
import Telemetry
import Tracing
import Upstream

/// The clocks the request path reads, injected so that tests can hold time or move it:
/// monotonic seconds for durations and freshness, wall-clock seconds for timestamps.
final class PipelineClock: Sendable {
    let now: @Sendable () -> Double
    let wall: @Sendable () -> Double

    init(now: @escaping @Sendable () -> Double, wall: @escaping @Sendable () -> Double) {
        self.now = now
        self.wall = wall
    }

    static let system = PipelineClock(now: Clock.now, wall: Clock.wall)
}

/// One worker's request path, from a request read to its one reply: refusals, admin
/// endpoints (answered by the worker), routing, request serializers, mocks, tapes, the
/// cache, the upstream through an `UpstreamClient`, response serializers, and the reply
/// through the request's `ClientExchange`. No socket of its own: tests drive it with an
/// exchange and an upstream held in memory.
final class RequestPipeline {
    private(set) var config: ServerConfig
    /// `config.hosts`, read on every request without copying the configuration.
    private(set) var hosts: [String]
    private(set) var table: RouteTable
    let session: any UpstreamClient
    /// The process's response cache.
    let cache: ProcessCache
    let telemetry: WorkerTelemetry
    /// Where each request's completion event goes.
    let recorder: CompletionRecorder
    /// The process-wide telemetry (failure evidence).
    let shared: Telemetry
    /// Connections and buffered bytes, shared by all workers.
    let budget: ProcessBudget
    /// `1.1 serializerd-<id>`: this daemon's Via entry (DESIGN §4).
    let via: String
    /// `serializerd-<id>`: the token a loop is recognised by.
    let viaID: [UInt8]
    let clock: PipelineClock
    /// Where another worker's finished miss wakes this worker's parked requests.
    let mailbox: Mailbox
    /// Admin endpoints: the worker's to answer.
    let admin: (any ClientExchange, RequestTarget, ResponseWriter) -> Void
    /// A request stopped waiting, on its upstream or on another's miss (a draining
    /// worker may be done).
    var upstreamEnded: () -> Void = {}
    // Worker-thread only, each access a single statement: unchecked (the runtime check
    // cost more than the counter).
    @exclusivity(unchecked) var requestIDs = RequestID()
    /// Trace and span ids for this worker's requests.
    @exclusivity(unchecked) var traceIDs = TraceIDSource()
    /// New requests are refused (503) and parked ones answered so.
    var shuttingDown = false
    /// Requests waiting on an upstream.
    @exclusivity(unchecked) private(set) var inFlight = 0
    /// Requests waiting for another's miss, by key (resumed from the mailbox).
    var parked: [CacheKey: [() -> Void]] = [:]
    /// Requests waiting in a route's queue for an upstream slot, by place.
    var queued: [UInt64: QueuedRequest] = [:]
    /// Delays made so far, for their ids.
    var delays: UInt64 = 0
    /// Each route's fault draws on this worker (a reload starts them again from `seed`).
    var faultDice: [ObjectIdentifier: FaultDice] = [:]
    /// Some route may pace request bodies (`network.up` or header control).
    private(set) var shapesUploads = false
    /// The runtime changes' version the draws were seeded under.
    var faultDiceVersion = 0
    /// Network conditions set at runtime (`/-/network`), shared by all workers.
    let networkOverrides: NetworkOverrides
    /// The worker's open WebSockets, for `/-/inflight`.
    var openWebSockets: [ObjectIdentifier: any OpenWebSocket] = [:]
    /// Where a WebSocket's upstream bytes are read into: one buffer for the worker's
    /// WebSockets, which are read one at a time.
    private(set) lazy var tunnelScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
    /// Timers on the worker's loop (a stream's idle time); nil in-process, where streams
    /// keep no idle time.
    var makeTimer: ((@escaping () -> Void) -> Timer)?

    init(config: ServerConfig, session: any UpstreamClient, cache: ProcessCache, telemetry: WorkerTelemetry, shared: Telemetry,
         budget: ProcessBudget, via: String, mailbox: Mailbox, clock: PipelineClock = .system,
         networkOverrides: NetworkOverrides = NetworkOverrides(),
         admin: @escaping (any ClientExchange, RequestTarget, ResponseWriter) -> Void) {
        self.config = config
        hosts = config.hosts
        table = RouteTable(config.routes)
        self.session = session
        self.cache = cache
        self.telemetry = telemetry
        recorder = CompletionRecorder(telemetry: telemetry)
        self.shared = shared
        self.budget = budget
        self.via = via
        viaID = Array(via.utf8.split(separator: UInt8(ascii: " ")).last ?? [])
        self.mailbox = mailbox
        self.clock = clock
        self.networkOverrides = networkOverrides
        self.admin = admin
        shapesUploads = Self.shapesUploads(config)
    }

    /// A reload: in-flight requests keep the route they captured; new ones see the new table.
    func apply(_ config: ServerConfig) {
        self.config = config
        hosts = config.hosts
        table = RouteTable(config.routes)
        faultDice = [:]
        shapesUploads = Self.shapesUploads(config)
    }

    static func shapesUploads(_ config: ServerConfig) -> Bool {
        config.routes.contains { $0.network.map { $0.up != nil || $0.headerControl } ?? false }
    }

    /// The whole life of one request (DESIGN §1): refused, answered by an admin endpoint,
    /// or routed and forwarded.
    func handle(_ request: any ClientExchange) {
        let rawTarget = request.target
        let context = RequestContext(request: request,
                                     requestID: RequestID.accept(request.fields.first("X-Request-Id")) ?? requestIDs.make(),
                                     recorder: recorder, clock: clock, path: rawTarget.prefix(upToByte: UInt8(ascii: "?")))
        let reply = context.reply
        // Refusals that end the connection: the request could not be read, the server is
        // stopping, or the client expects a tunnel.
        func refuse(_ failure: ProxyFailure, _ extra: [(String, String)] = []) {
            reply.problem(failure, route: nil, extraHeaders: extra + [("Connection", "close")])
        }
        if let failure = request.failure {
            switch failure {
            case .malformed(let detail): return refuse(.malformedRequest(detail))
            case .headTooLarge: return refuse(.headersTooLarge(limit: config.limits.maxHeaderBytes))
            case .bodyTooLarge: return refuse(.requestTooLarge(limit: config.limits.maxRequestBody))
            }
        }
        if shuttingDown { return refuse(.unavailable) }
        if request.method == "CONNECT" { return refuse(.methodNotAllowed(allow: proxiedMethods)) }
        if HeaderPolicy.isLoop(request, viaID: viaID) { return reply.problem(.loopDetected, route: nil) }
        guard let target = RequestTarget(rawTarget) else {
            return reply.problem(.invalidPath("the request-target is not a path or an http(s) URL"), route: nil)
        }
        if target.host == nil {
            if AdminRouter<Void>.isAdmin(path: target.path) {
                context.label = RouteLabel.admin
                return admin(request, target, reply)
            }
            // Before routing: a rebinding page learns nothing of which paths are routes.
            let hosts = self.hosts
            if !request.peerIsUnixSocket, request.withHost({ ServerConfig.namesThisDaemon(host: $0, hosts: hosts) }) == false {
                return reply.problem(.misdirected(host: request.fields.first("Host") ?? ""), route: nil)
            }
        }
        // Admin endpoints stay up (an operator must be able to see why); proxied requests
        // wait until buffered bytes drain.
        if budget.isOverloaded { return reply.problem(.overloaded, route: nil, extraHeaders: [("Retry-After", "1")]) }
        switch table.match(method: request.method, path: target.path, host: target.host) {
        case .noRoute: reply.problem(.noRoute(request.method + " " + (target.host.map { "http://" + $0 } ?? "") + target.path), route: nil)
        case .methodNotAllowed(let allow): reply.problem(.methodNotAllowed(allow: allow), route: nil)
        case .route(let route): forward(context, route: route, target: target)
        }
    }

    var proxiedMethods: [String] {
        var methods: Set<String> = []
        for route in table.routes { methods.formUnion(route.methods ?? Set(HTTPMethod.forwardedByDefault)) }
        methods.remove("CONNECT")
        return methods.sorted()
    }

    /// Shutdown: every open WebSocket, relayed or replayed, closes with 1001 (none ends on its own).
    func closeWebSockets() {
        for relay in Array(openWebSockets.values) { relay.shutdown() }
    }

    /// Keeps one event of a stream or WebSocket for the inspector, while someone watches
    /// `/-/events`, and hands the last ones to the process's log at most four times a second.
    func noteStreamEvent(_ recent: inout RecentEvents?, _ context: RequestContext, kind: String, direction: String?, label: String?,
                         data: [UInt8]) {
        guard shared.hub.hasSubscribers else { return }
        if recent == nil { recent = RecentEvents() }
        // In place: a copy of the ring per event would cost what the ring holds.
        recent?.add(StreamLog.Entry(time: clock.wall(), direction: direction, label: label, data: data, redaction: config.capture))
        let now = clock.now()
        guard let published = recent?.published, now - published >= 0.25, let entries = recent?.entries else { return }
        recent?.published = now
        shared.streams.put(requestID: context.requestID, kind: kind, open: true, entries: entries)
    }

    /// A stream's end: its last events, if any were kept, stay for the inspector.
    func publishStreamEvents(_ recent: RecentEvents?, _ context: RequestContext, kind: String) {
        guard let recent else { return }
        shared.streams.put(requestID: context.requestID, kind: kind, open: false, entries: recent.entries)
    }

    func requestStarted() {
        inFlight += 1
        telemetry.metrics.setInflight(inFlight)
    }

    func inFlightEnded() {
        inFlight -= 1
        telemetry.metrics.setInflight(inFlight)
    }
}
