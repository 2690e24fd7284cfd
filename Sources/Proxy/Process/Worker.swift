import Cache
import EventLoop
import HTTPCore
import Network
import Serializers
import Telemetry
import Upstream

/// One event-loop thread: its own HTTP server on the shared port, its own curl multi. A
/// request lives and dies here, so the request path takes no lock.
final class Worker {
    let loop: EventLoop
    let session: any UpstreamClient
    private(set) var server: HTTPServer!
    /// The configuration and routes in force: the pipeline's (a reload changes them there).
    var config: ServerConfig { pipeline.config }
    var table: RouteTable { pipeline.table }
    private var mailboxWatch: Watch?
    private var graceTimer: Timer?
    /// During shutdown, once idle: polls until the last replies have left.
    private var drainTimer: Timer?
    private var graceDeadline = 0.0
    private(set) var shuttingDown = false
    let mailbox: Mailbox
    /// Connections and buffered bytes, shared by all workers.
    let budget: ProcessBudget
    /// The request path: everything between a request read and its reply.
    private(set) var pipeline: RequestPipeline!

    private var heartbeatTimer: Timer?
    let shared: Telemetry
    let telemetry: WorkerTelemetry
    private var flushTimer: Timer?
    static let telemetryFlushDelay = 0.005
    /// `/-/events` clients this worker streams to, by their hub subscriber.
    var streams: [ObjectIdentifier: EventStream] = [:]
    var streamTimer: Timer?
    /// The process's response cache.
    let cache: ProcessCache
    /// Every worker's transfers in flight (`/-/inflight`).
    let inflight: InflightBoard
    private var progressTimer: Timer?
    /// Whether the last progress tick saw transfers (the board then needs its update).
    var hadInflight = false

    /// `upstream` replaces the libcurl session manager and `clock` the system's (in-process
    /// tests of the pipeline).
    init(config: ServerConfig, sockets: [Int32], mailbox: Mailbox, heartbeat: Heartbeat?, telemetry: Telemetry,
         budget: ProcessBudget, via: String, cache: ProcessCache, inflight: InflightBoard, upstream: (any UpstreamClient)? = nil,
         clock: PipelineClock = .system, networkOverrides: NetworkOverrides = NetworkOverrides()) throws(EventLoopError) {
        self.cache = cache
        self.inflight = inflight
        shared = telemetry
        self.budget = budget
        self.telemetry = WorkerTelemetry(telemetry)
        loop = try EventLoop()
        if let upstream { session = upstream } else { session = try SessionManager(loop: loop, budget: budget) }
        self.mailbox = mailbox
        let pipeline = RequestPipeline(config: config, session: session, cache: cache, telemetry: self.telemetry, shared: telemetry,
                                       budget: budget, via: via, mailbox: mailbox, clock: clock,
                                       networkOverrides: networkOverrides) { [unowned self] request, target, writer in
            self.serveAdmin(request, target: target, writer: writer)
        }
        self.pipeline = pipeline
        pipeline.upstreamEnded = { [unowned self] in self.finishIfIdle() }
        let loop = loop
        pipeline.makeTimer = { [unowned loop] fire in loop.makeTimer(fire) }
        server = try HTTPServer(loop: loop, sockets: sockets, settings: Worker.serverSettings(config), budget: budget) {
            pipeline.handle($0)
        }
        server.uploadRate = { head, peer, unix in pipeline.uploadRate(head, peer: peer, unix: unix) }
        let metrics = telemetry.metrics
        let logger = telemetry.logger()
        // One line and one count per episode, however long descriptors stay short.
        server.onPause = { reason in
            metrics.countAcceptPause(descriptors: reason == .descriptors)
            logger.warning("accept_paused", metadata: ["reason": reason == .descriptors
                ? "no file descriptors left (EMFILE/ENFILE); resuming when one frees"
                : "limits.max_connections reached with no idle connection to close"])
        }
        mailboxWatch = loop.watch(fd: mailbox.fd, read: true, write: false) { [unowned self] _, _ in self.readMailbox() }
        // Log lines and live events leave in batches, at most `telemetryFlushDelay` after
        // the first of them: under load one write(2) and one stream chunk carry dozens of
        // requests; when idle a line still appears within milliseconds.
        let flush = loop.makeTimer { [unowned self] in self.telemetry.flush() }
        flushTimer = flush
        self.telemetry.scheduleFlush = { flush.schedule(after: Worker.telemetryFlushDelay) }
        self.telemetry.deliverLocally = { [unowned self] in self.deliverLocally($0) }
        let progress = loop.makeTimer(repeating: true) { [unowned self] in self.progressTick() }
        progress.schedule(after: Worker.progressInterval)
        progressTimer = progress
        if let heartbeat {
            let timer = loop.makeTimer(repeating: true) { heartbeat.beat() }
            timer.schedule(after: heartbeat.interval)
            heartbeatTimer = timer
        }
    }

    /// Runs the loop until shutdown completes, then frees everything on this thread.
    func run() {
        loop.run()
        closeStreams()
        session.close()
        mailboxWatch?.cancel()
        graceTimer?.cancel()
        drainTimer?.cancel()
        heartbeatTimer?.cancel()
        progressTimer?.cancel()
        inflight.publish([], worker: ObjectIdentifier(self))
        // Closing connections records replies that never arrived: flushed after it.
        server.close()
        telemetry.flush()
        telemetry.spans.handOver(now: Clock.now(), all: true)
        flushTimer?.cancel()
        loop.close()
    }

    static func serverSettings(_ config: ServerConfig) -> HTTPServerSettings {
        HTTPServerSettings(maxHeaderBytes: config.limits.maxHeaderBytes, maxBodyBytes: config.limits.maxRequestBody,
                           idleTimeout: config.timeouts.clientIdle)
    }

    private func readMailbox() {
        for command in mailbox.drain() {
            switch command {
            case .reload(let newConfig):
                pipeline.apply(newConfig)
                server.apply(Worker.serverSettings(newConfig))
            case .shutdown:
                beginShutdown()
            case .events:
                deliverEvents()
            case .cacheFilled(let key):
                pipeline.wakeParked(key)
            case .gateOpened(let id):
                pipeline.gateOpened(id)
            }
        }
    }

    private func beginShutdown() {
        guard !shuttingDown else { return }
        shuttingDown = true
        pipeline.shuttingDown = true
        server.stopAccepting()
        // Live streams never finish on their own; they end with the process.
        closeStreams()
        pipeline.closeWebSockets()
        let timer = loop.makeTimer { [unowned self] in
            // Grace is over: whatever is still waiting on an upstream gets its 503 now.
            self.session.abortAll()
            self.finishIfIdle()
        }
        timer.schedule(after: config.timeouts.shutdownGrace)
        graceTimer = timer
        graceDeadline = Clock.now() + config.timeouts.shutdownGrace
        finishIfIdle()
    }

    func finishIfIdle() {
        guard shuttingDown, pipeline.inFlight == 0, drainTimer == nil else { return }
        mailboxWatch?.cancel()
        mailboxWatch = nil
        heartbeatTimer?.cancel()
        heartbeatTimer = nil
        // Replies still being written (a long serialization may have just ended) get until
        // the grace deadline, and at least one more second, to reach their clients.
        let deadline = max(graceDeadline, Clock.now() + Worker.lastRepliesSeconds)
        let drain = loop.makeTimer(repeating: true) { [unowned self] in
            if !self.server.hasRepliesLeaving || Clock.now() >= deadline { self.loop.exit() }
        }
        drain.schedule(after: 0.01)
        drainTimer = drain
    }

    static let lastRepliesSeconds = 1.0
}
