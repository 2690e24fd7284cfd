import EventLoop
import Serializers
import Upstream
#if canImport(Glibc)
import Glibc
#endif

/// Owns the process: listening sockets, one thread per worker, and the main loop that
/// turns signals into commands — SIGTERM/SIGINT drain and stop, SIGHUP reloads.
public final class Server {
    private var config: ServerConfig
    private let reload: () throws -> ServerConfig
    private var mailboxes: [Mailbox] = []
    private var threads: [pthread_t] = []

    /// `reload` re-reads and validates the configuration for SIGHUP.
    public init(config: ServerConfig, reload: @escaping () throws -> ServerConfig) {
        self.config = config
        self.reload = reload
    }

    /// Serves until SIGTERM/SIGINT, then returns after every worker has drained.
    public func run() throws {
        _ = ProcessStart.monotonic
        signal(SIGPIPE, SIG_IGN)
        Self.unblockControlSignals()
        MallocTuning.apply()
        SessionManager.globalInit()
        let count = config.workers ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        var port = config.listen.port
        var sockets: [Int32] = []
        for _ in 0..<count {
            let opened = try ListeningSocket.open(host: config.listen.host, port: port)
            port = opened.port
            sockets.append(opened.fd)
        }
        let main = try EventLoop()
        for socket in sockets { startWorker(socket: socket) }
        let listen = ListenAddress(host: config.listen.host, port: port)
        LifecycleLog.event("ready", [("listen", .string(listen.description)), ("workers", .number(String(count))),
                                     ("routes", .number(String(config.routes.count))), ("config", .string(config.source))])
        var watches: [Watch] = []
        for sig in [SIGTERM, SIGINT] {
            watches.append(main.onSignal(sig) { [unowned self] in self.shutdown(main, signal: sig) })
        }
        watches.append(main.onSignal(SIGHUP) { [unowned self] in self.reloadConfig() })
        main.run()
        for thread in threads { pthread_join(thread, nil) }
        for watch in watches { watch.cancel() }
        main.close()
        LifecycleLog.event("stopped")
    }

    /// A blocked signal mask survives exec; a parent that blocked SIGTERM (test runners,
    /// some supervisors) would otherwise make the daemon unstoppable.
    static func unblockControlSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private func startWorker(socket: Int32) {
        let mailbox = Mailbox()
        mailboxes.append(mailbox)
        let config = self.config
        threads.append(WorkerThread.spawn {
            do {
                let worker = try Worker(config: config, socket: socket, mailbox: mailbox)
                worker.run()
            } catch {
                LifecycleLog.event("worker_failed", level: "error", [("error", .string("\(error)"))])
            }
        })
    }

    private func shutdown(_ main: EventLoop, signal: Int32) {
        LifecycleLog.event("shutdown", [("signal", .string(signal == SIGTERM ? "SIGTERM" : "SIGINT")),
                                        ("grace_seconds", .number(String(config.timeouts.shutdownGrace)))])
        for mailbox in mailboxes { mailbox.post(.shutdown) }
        main.exit()
    }

    private func reloadConfig() {
        do {
            var fresh = try reload()
            // The listening address and worker count belong to the running process.
            fresh.listen = config.listen
            fresh.workers = config.workers
            config = fresh
            for mailbox in mailboxes { mailbox.post(.reload(fresh)) }
            LifecycleLog.event("config_reloaded", [("routes", .number(String(fresh.routes.count)))])
        } catch {
            LifecycleLog.event("config_reload_failed", level: "error", [("error", .string("\(error)"))])
        }
    }
}

/// A joinable pthread running one closure (the worker owns everything it creates).
enum WorkerThread {
    final class Body: @unchecked Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func spawn(_ run: @escaping @Sendable () -> Void) -> pthread_t {
        var thread = pthread_t()
        let body = Unmanaged.passRetained(Body(run)).toOpaque()
        pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, body)
        return thread
    }
}
