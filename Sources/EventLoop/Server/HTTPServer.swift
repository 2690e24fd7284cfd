internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// serializerd's HTTP/1.1 server on one worker's loop: accepts on the sockets this worker
/// owns and runs a `Connection` for each client. Under pressure — the connection cap or
/// no descriptors left — it first closes the connection that has waited longest for its
/// client (idle keep-alive, or a request still arriving), so a slow or idle client never
/// keeps a new one out; with none to close, accepting pauses until a connection ends.
public final class HTTPServer {
    let loop: EventLoop
    private(set) var settings: HTTPServerSettings
    let budget: ProcessBudget
    let handler: (ServerRequest) -> Void
    /// Where every connection of this worker reads into first.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
    private var listeners: [(fd: Int32, event: OpaquePointer?)] = []
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var paused: AcceptPause?
    /// From the first pause until accepting works again without one: one report for all.
    private var inEpisode = false
    private var resumeTimer: Timer?
    private(set) var isStopping = false
    /// Called once per episode of paused accepting (not on every retry within it).
    public var onPause: ((AcceptPause) -> Void)?
    /// Bytes per second a request's body is read at, asked once its head has arrived and a
    /// body follows (`network.up`); nil = unpaced. Given the head, the peer's address and
    /// whether it came through a Unix socket.
    public var uploadRate: ((RequestHead, String, Bool) -> Int?)?
    private var dateSecond = 0
    private var dateText = ""

    public init(loop: EventLoop, sockets: [Int32], settings: HTTPServerSettings, budget: ProcessBudget,
                handler: @escaping (ServerRequest) -> Void) throws(EventLoopError) {
        self.loop = loop
        self.settings = settings
        self.budget = budget
        self.handler = handler
        let me = Unmanaged.passUnretained(self).toOpaque()
        for fd in sockets {
            guard let event = event_new(loop.base, fd, Int16(EV_READ | EV_PERSIST), HTTPServer.acceptCallback, me) else {
                throw EventLoopError("event_new failed for a listening socket")
            }
            guard event_add(event, nil) == 0 else {
                event_free(event)
                throw EventLoopError("event_add failed for a listening socket")
            }
            listeners.append((fd, event))
        }
        resumeTimer = loop.makeTimer { [unowned self] in self.resume() }
    }

    /// Limits for requests read from now on.
    public func apply(_ settings: HTTPServerSettings) {
        self.settings = settings
    }

    // MARK: accepting

    /// EV_READ on a listening socket
    static let acceptCallback: event_callback_fn = { fd, _, arg in
        Unmanaged<HTTPServer>.fromOpaque(arg!).takeUnretainedValue().acceptReady(fd)
    }

    /// Accepts what is waiting, a bounded batch per turn so one busy listener cannot
    /// starve the loop.
    private func acceptReady(_ listener: Int32) {
        for round in 0..<64 {
            guard paused == nil, !isStopping else { return }
            if budget.openConnections >= budget.maxConnections {
                // Only on the first round is a connection known to be waiting; later ones
                // leave it to the next readiness report rather than close anyone for nothing.
                guard round == 0 else { return }
                if !evictOne() {
                    pause(.maxConnections)
                    return
                }
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    if evictOne() { continue }
                    pause(.descriptors)
                    return
                default:
                    inEpisode = false   // EAGAIN: nothing more waiting
                    return
                }
            }
            guard let connection = Connection(fd: fd, peer: Peer(storage: storage), server: self, limits: settings.parserLimits) else {
                Glibc.close(fd)
                continue
            }
            budget.addConnection()
            connections[ObjectIdentifier(connection)] = connection
        }
    }

    /// A connection waiting for its client this long may be closed to make room; younger
    /// ones are spared, so a burst of new clients never pushes itself out.
    static let evictionAge = 0.1

    /// Closes the connection that has waited longest for its client; false if none waits.
    private func evictOne() -> Bool {
        var oldest: (connection: Connection, since: Double)?
        let cutoff = Clock.now() - HTTPServer.evictionAge
        for connection in connections.values {
            guard let since = connection.machine.waitingSince, since < cutoff else { continue }
            if oldest == nil || since < oldest!.since { oldest = (connection, since) }
        }
        guard let oldest else { return false }
        oldest.connection.close()
        return true
    }

    private func pause(_ reason: AcceptPause) {
        guard paused == nil else { return }
        paused = reason
        for listener in listeners { event_del(listener.event) }
        if !inEpisode {
            inEpisode = true
            onPause?(reason)
        }
        // A descriptor may free elsewhere (an upstream socket, another worker): look again soon.
        resumeTimer?.schedule(after: HTTPServer.resumeInterval)
    }

    static let resumeInterval = 0.1

    private func resume() {
        guard paused != nil, !isStopping else { return }
        // Should libevent refuse to watch a listener again, stay paused and look again
        // shortly rather than stop accepting for good.
        guard listeners.allSatisfy({ event_add($0.event, nil) == 0 }) else {
            resumeTimer?.schedule(after: HTTPServer.resumeInterval)
            return
        }
        paused = nil
        // Anything waiting is accepted now; if that fails again, accepting pauses again
        // without another report until the backlog has drained.
        if let fd = listeners.first?.fd { acceptReady(fd) }
    }

    func connectionClosed(_ connection: Connection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
        budget.closeConnection()
        if paused != nil { resumeTimer?.schedule(after: 0) }
    }

    // MARK: lifecycle

    /// Stops accepting and closes connections that wait for their client; the others
    /// close after their reply.
    public func stopAccepting() {
        isStopping = true
        for listener in listeners {
            event_del(listener.event)
            event_free(listener.event)
            Glibc.close(listener.fd)
        }
        listeners = []
        resumeTimer?.stop()
        for connection in Array(connections.values) where connection.machine.closesOnShutdown { connection.close() }
    }

    /// Whether a reply is still being written, or was just written and its connection
    /// waits for the client's FIN (closing it now could reset the reply away).
    public var hasRepliesLeaving: Bool {
        connections.values.contains { $0.machine.hasReplyLeaving }
    }

    /// Closes everything. Only after the loop stopped.
    public func close() {
        if !isStopping { stopAccepting() }
        for connection in Array(connections.values) { connection.close() }
        resumeTimer?.cancel()
        scratch.deallocate()
    }

    /// The Date header's value (IMF-fixdate), formatted once a second.
    func date() -> String {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            dateText = HTTPDate.format(unixSeconds: Double(now))
        }
        return dateText
    }
}
