import Cache
import Contracts
import EventLoop
import HTTPCore
import Network
import Logging
import Serializers
import Tapes
import Telemetry
import Upstream
#if canImport(Glibc)
import Glibc
#endif

/// Owns the process: listening sockets, one thread per worker, and the main loop that
/// turns signals into commands — SIGTERM/SIGINT drain and stop, SIGHUP reloads.
public final class Server {
    private var config: ServerConfig
    private let reload: () throws -> ServerConfig
    private let telemetry: Telemetry
    private let logger: Logger
    private var mailboxes: [Mailbox] = []
    private var threads: [pthread_t] = []
    private var heartbeats: [Heartbeat] = []
    private var notifier: ServiceNotifier?
    /// The Unix socket file this process created, removed on exit if it is still that file.
    private var unixSocket: (path: String, file: ListeningSocket.FileIdentity)?
    private let budget: ProcessBudget
    /// Unique to this running daemon, so chained serializerds tell their Via entries apart.
    private let via: String
    /// The response cache every worker shares.
    private let cache: ProcessCache
    /// Every worker's transfers in flight, for `/-/inflight`.
    private let inflight = InflightBoard()
    /// `/-/network`'s runtime changes, shared by the workers.
    private let networkOverrides = NetworkOverrides()
    /// The routes' active health probes, on the main loop once it exists.
    private var probes: HealthProbes?
    /// The tapes, jars and reachability every load of the config shares.
    private let state: ProcessState

    /// `reload` re-reads and validates the configuration for SIGHUP, with the `state`
    /// `config` was loaded with.
    public init(config: ServerConfig, state: ProcessState, telemetry: Telemetry, reload: @escaping () throws -> ServerConfig) {
        self.config = config
        self.state = state
        self.reload = reload
        self.telemetry = telemetry
        budget = ProcessBudget(maxConnections: Server.connectionCap(config.limits.maxConnections),
                               maxBufferedBytes: config.limits.maxBufferedBytes)
        telemetry.metrics.attach(budget)
        let cache = ProcessCache(maxBytes: config.cacheMaxBytes)
        cache.apply(routes: config.routes.map { ($0.name, $0.fingerprint) })
        self.cache = cache
        telemetry.metrics.attachCache { cache.store.totals() }
        var random = SystemRandomNumberGenerator()
        via = "1.1 serializerd-" + String(random.next() & 0xFFFF_FFFF_FFFF, radix: 16)
        logger = telemetry.logger()
        config.log.apply(to: telemetry.output)
    }

    /// Serves until SIGTERM/SIGINT, then returns after every worker has drained.
    /// `environment` carries the service manager's variables (NOTIFY_SOCKET,
    /// WATCHDOG_USEC, LISTEN_PID/LISTEN_FDS).
    public func run(environment: [String: String]) throws {
        _ = ProcessStart.monotonic
        signal(SIGPIPE, SIG_IGN)
        Self.unblockControlSignals()
        MallocTuning.apply()
        let libeventLogger = logger
        LibeventLog.route { severity, message, suppressed in
            var metadata: Logger.Metadata = ["severity": "\(severity)", "message": "\(message)"]
            if suppressed > 0 { metadata["suppressed"] = .stringConvertible(suppressed) }
            libeventLogger.warning("libevent", metadata: metadata)
        }
        SessionManager.globalInit()
        state.tapes.start(logger: logger)
        telemetry.tracer.apply(config.tracing?.export)
        let count = config.workers ?? ServerConfig.autoWorkers
        let (perWorker, listen) = try listeningSockets(workers: count, environment: environment)
        notifier = ServiceNotifier(environment: environment)
        let watchdog = ServiceWatchdog.interval(environment: environment)
        let main = try EventLoop()
        let changes = logger, hub = telemetry.hub
        state.reachability.listen { change in
            var metadata: Logger.Metadata = ["route": "\(change.route)", "from": "\(change.from.name)", "to": "\(change.to.name)",
                                             "by": "\(change.by)", "detail": "\(change.detail)"]
            if change.suppressed > 0 { metadata["suppressed"] = .stringConvertible(change.suppressed) }
            if change.to == .unreachable { changes.warning("reachability_changed", metadata: metadata) } else {
                changes.notice("reachability_changed", metadata: metadata)
            }
            hub.publish(event: "reachability_changed", json: change.json)
        }
        state.gates.listenBreakers { change in
            let metadata: Logger.Metadata = ["route": "\(change.route)", "from": "\(change.from.name)", "to": "\(change.to.name)"]
            if change.to == .open { changes.warning("breaker_changed", metadata: metadata) } else { changes.notice("breaker_changed", metadata: metadata) }
            hub.publish(event: "breaker_changed", json: NormalizedJSON(.object([
                ("route", .string(change.route)), ("from", .string(change.from.name)), ("to", .string(change.to.name)),
                ("at", .string(UTCTimestamp.format(unixSeconds: Clock.wall(), fraction: .milliseconds))),
            ])).bytes)
        }
        state.shapes.listen { drifts in
            for drift in drifts {
                let at = UTCTimestamp.format(unixSeconds: drift.at, fraction: .milliseconds)
                changes.warning("shape_drift", metadata: [
                    "route": "\(drift.route)", "endpoint": "\(drift.endpoint)", "status": .stringConvertible(drift.status),
                    "kind": "\(drift.change.kind.rawValue)", "pointer": "\(drift.change.pointer)", "was": "\(drift.change.was)",
                    "now": "\(drift.change.now)"])
                hub.publish(event: "shape_drift", json: NormalizedJSON(drift.json(at: at)).bytes)
            }
        }
        probes = try HealthProbes(loop: main, budget: budget)
        probes?.apply(config.routes, maxResponseBytes: config.limits.maxResponseBody)
        // Handlers first: a signal sent the moment `ready` is seen must find them
        // (they run only once the main loop runs, after every worker has started).
        var watches: [Watch] = []
        for sig in [SIGTERM, SIGINT] {
            watches.append(main.onSignal(sig) { [unowned self] in self.shutdown(main, signal: sig) })
        }
        watches.append(main.onSignal(SIGHUP) { [unowned self] in self.reloadConfig(listen: listen) })
        let startup = StartupReport()
        for sockets in perWorker {
            let heartbeat = watchdog.map { Heartbeat(interval: $0 / 4) }
            if let heartbeat { heartbeats.append(heartbeat) }
            startWorker(sockets: sockets, heartbeat: heartbeat, startup: startup)
        }
        guard startup.waitForAll(count) else {
            for mailbox in mailboxes { mailbox.post(.shutdown) }
            for thread in threads { pthread_join(thread, nil) }
            for watch in watches { watch.cancel() }
            probes?.close()
            main.close()
            if let unixSocket { ListeningSocket.removeUnix(path: unixSocket.path, ifStill: unixSocket.file) }
            throw EventLoopError("a worker could not start (see the worker_failed event)")
        }
        if budget.maxConnections < config.limits.maxConnections {
            logger.warning("max_connections_lowered", metadata: [
                "max_connections": .stringConvertible(budget.maxConnections),
                "reason": "RLIMIT_NOFILE allows \(budget.maxConnections) connections with their upstream descriptors"])
        }
        warnAboutEmptyTapes(config)
        warnAboutUnverifiedTLS(config)
        logger.notice("ready", metadata: ["listen": "\(listen)", "workers": .stringConvertible(count),
                                        "routes": .stringConvertible(config.routes.count), "config": "\(config.source)",
                                        "version": "\(ServerVersion.string)"])
        notifier?.send("READY=1\nSTATUS=\(status(listen))")
        let watchdogTimer = watchdog.map { startWatchdog(main, interval: $0 / 2) }
        main.run()
        for thread in threads { pthread_join(thread, nil) }
        for watch in watches { watch.cancel() }
        watchdogTimer?.cancel()
        probes?.close()
        // What was recorded since the writer's last pass, and the spans still waiting.
        state.tapes.flush()
        telemetry.tracer.stop()
        main.close()
        if let unixSocket { ListeningSocket.removeUnix(path: unixSocket.path, ifStill: unixSocket.file) }
        logger.notice("stopped")
    }

    /// One set of listening sockets per worker: inherited from the service manager (each
    /// worker accepts on its own duplicate) or bound here with SO_REUSEPORT.
    private func listeningSockets(workers: Int, environment: [String: String]) throws -> ([[Int32]], String) {
        if let inherited = try SocketActivation.inheritedSockets(environment: environment) {
            let perWorker = (0..<workers).map { _ in inherited.map { fcntl($0, F_DUPFD_CLOEXEC, 3) } }
            let address = inherited.map(ListeningSocket.localAddress).joined(separator: ",")
            for fd in inherited { close(fd) }
            return (perWorker, address)
        }
        if let path = config.listen.unixPath {
            // One socket, a duplicate per worker (SO_REUSEPORT does not apply to Unix sockets).
            let (fd, file) = try ListeningSocket.openUnix(path: path)
            unixSocket = (path, file)
            let perWorker = (0..<workers).map { _ in [fcntl(fd, F_DUPFD_CLOEXEC, 3)] }
            close(fd)
            return (perWorker, config.listen.description)
        }
        try ListeningSocket.checkAvailable(host: config.listen.host, port: config.listen.port)
        var port = config.listen.port
        var perWorker: [[Int32]] = []
        for _ in 0..<workers {
            let opened = try ListeningSocket.open(host: config.listen.host, port: port)
            port = opened.port
            perWorker.append([opened.fd])
        }
        // The port the kernel chose (`:0`), for what names this daemon (HAR URLs).
        config.listen = ListenAddress(host: config.listen.host, port: port)
        return (perWorker, config.listen.description)
    }

    private func status(_ listen: String) -> String {
        "serving on \(listen), \(config.routes.count) routes"
    }

    /// Pings systemd only while every worker's heartbeat moves (see `Heartbeat`).
    private func startWatchdog(_ main: EventLoop, interval: Double) -> Timer {
        var seen = heartbeats.map(\.count)
        let timer = main.makeTimer(repeating: true) { [unowned self] in
            let now = heartbeats.map(\.count)
            let stalled = zip(now, seen).enumerated().filter { $0.element.0 == $0.element.1 }.map(\.offset)
            seen = now
            if stalled.isEmpty {
                notifier?.send("WATCHDOG=1")
            } else {
                logger.error("worker_stalled", metadata: ["workers": .array(stalled.map { .stringConvertible($0) })])
            }
        }
        timer.schedule(after: interval)
        return timer
    }

    /// Descriptors kept out of the connection cap: the loops, pipes, logs and listeners.
    static let reservedDescriptors = 64

    /// `limits.max_connections`, lowered to what the descriptor limit can carry: each
    /// connection may need a second descriptor for its upstream, and a proxy that runs out
    /// of descriptors fails requests it already accepted. The soft limit is first raised
    /// to the hard one, as servers do.
    static func connectionCap(_ configured: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return configured }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur != rlim_t.max else { return configured }   // RLIM_INFINITY
        let carried = max(1, (Int(limit.rlim_cur) - reservedDescriptors) / 2)
        return min(configured, carried)
    }

    /// A blocked signal mask survives exec; a parent that blocked SIGTERM (test runners,
    /// some supervisors) would otherwise make the daemon unstoppable.
    static func unblockControlSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private func startWorker(sockets: [Int32], heartbeat: Heartbeat?, startup: StartupReport) {
        let mailbox = Mailbox()
        mailboxes.append(mailbox)
        let config = self.config
        let telemetry = self.telemetry
        let logger = self.logger
        let budget = self.budget
        let via = self.via
        let cache = self.cache
        let inflight = self.inflight
        let networkOverrides = self.networkOverrides
        threads.append(JoinableThread.spawn {
            let worker: Worker
            do {
                worker = try Worker(config: config, sockets: sockets, mailbox: mailbox, heartbeat: heartbeat, telemetry: telemetry,
                                    budget: budget, via: via, cache: cache, inflight: inflight, networkOverrides: networkOverrides)
            } catch {
                logger.error("worker_failed", metadata: ["error": "\(error)"])
                for fd in sockets { close(fd) }
                startup.report(ok: false)
                return
            }
            startup.report(ok: true)
            worker.run()
        })
    }

    private func shutdown(_ main: EventLoop, signal: Int32) {
        logger.notice("shutdown", metadata: ["signal": "\(signal == SIGTERM ? "SIGTERM" : "SIGINT")",
                                           "grace_seconds": .stringConvertible(config.timeouts.shutdownGrace)])
        notifier?.send("STOPPING=1\nSTATUS=draining in-flight requests")
        for mailbox in mailboxes { mailbox.post(.shutdown) }
        main.exit()
    }

    /// Every start and reload, for every route that accepts any certificate (DESIGN §2).
    private func warnAboutUnverifiedTLS(_ config: ServerConfig) {
        for route in config.routes where route.tls?.verify == false {
            logger.warning("tls_verify_off", metadata: ["route": "\(route.name)", "effect": "\(Route.unverifiedTLS)"])
        }
    }

    /// A route that replays from a tape with nothing on it, or whose file held entries
    /// without an answer (DESIGN §2: a warning at load).
    private func warnAboutEmptyTapes(_ config: ServerConfig) {
        for route in config.routes {
            if let tape = route.tape, tape.tape.skipped > 0 {
                logger.warning("tape_entries_skipped", metadata: ["route": "\(route.name)", "tape": "\(tape.tape.path)",
                                                                 "skipped": .stringConvertible(tape.tape.skipped),
                                                                 "reason": "saved without an answer (status 0: cancelled or blocked)"])
            }
            guard let tape = route.tape, tape.replays, tape.tape.count == 0 else { continue }
            logger.warning("tape_empty", metadata: ["route": "\(route.name)", "tape": "\(tape.tape.path)",
                                                   "effect": tape.mode == .replay ? "every request is a replay-miss until the tape has recordings"
                                                       : "every request is forwarded until the tape has recordings"])
        }
    }

    private func reloadConfig(listen: String) {
        // MONOTONIC_USEC is required by Type=notify-reload (systemd ≥ 253), ignored by 252.
        notifier?.send("RELOADING=1\nMONOTONIC_USEC=\(UInt64(Clock.now() * 1_000_000))")
        // READY=1 whatever the outcome: a failed reload keeps serving the old config.
        defer { notifier?.send("READY=1\nSTATUS=\(status(listen))") }
        do {
            var fresh = try reload()
            // The listening address and worker count belong to the running process.
            fresh.listen = config.listen
            fresh.workers = config.workers
            // A reload keeps what unchanged routes stored; a changed or removed route's
            // entries go (they were made by settings that no longer hold).
            cache.store.setMaxBytes(fresh.cacheMaxBytes)
            cache.apply(routes: fresh.routes.map { ($0.name, $0.fingerprint) })
            probes?.apply(fresh.routes, maxResponseBytes: fresh.limits.maxResponseBody)
            telemetry.tracer.apply(fresh.tracing?.export)
            config = fresh
            budget.setLimits(maxConnections: Server.connectionCap(fresh.limits.maxConnections), maxBufferedBytes: fresh.limits.maxBufferedBytes)
            for mailbox in mailboxes { mailbox.post(.reload(fresh)) }
            fresh.log.apply(to: telemetry.output)
            telemetry.metrics.countReload(succeeded: true)
            logger.notice("config_reloaded", metadata: ["routes": .stringConvertible(fresh.routes.count), "config": "\(fresh.source)"])
            warnAboutEmptyTapes(fresh)
            warnAboutUnverifiedTLS(fresh)
        } catch {
            telemetry.metrics.countReload(succeeded: false)
            logger.error("config_reload_failed", metadata: ["error": "\(error)"])
        }
    }
}
