internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// One client connection on a worker's loop: reads requests with `RequestParser`,
/// hands each complete one to the server's handler, and writes replies in order, one
/// request at a time (pipelined requests wait in the input until the reply before them
/// has left). Deadlines: an idle keep-alive connection, a request from its first byte,
/// and a reply being drained each get `client_idle`; a request being handled has none
/// (the upstream timeout governs).
final class Connection {
    enum State {
        /// Between requests (no byte of the next one yet).
        case idle
        /// Part of a request has arrived.
        case reading
        /// A complete request is with the handler.
        case handling
        /// A reply is queued and not yet drained.
        case writing
        /// A chunked stream is open.
        case streaming
        /// Our side is shut down after a final reply; input is read and dropped until the
        /// client closes, so unread bytes do not make the kernel reset the reply away.
        case lingering
        case closed
    }

    let fd: Int32
    let peer: Peer
    /// `peer.address`, formatted once: every proxied request on the connection needs it.
    lazy var peerAddress: String = peer.address
    unowned let server: HTTPServer
    var state = State.idle
    // Touched only on the worker's thread and never while another access is open: the
    // runtime's exclusivity check on these is a measurable share of a small request.
    @exclusivity(unchecked) var parser: RequestParser
    var readEvent: OpaquePointer?
    var writeEvent: OpaquePointer?
    var timer: OpaquePointer?
    /// When the current deadline was armed (for eviction: the oldest go first).
    var since: Double
    /// Unparsed input (pipelined or partial requests) from `pendingStart` on.
    @exclusivity(unchecked) var pending: [UInt8] = []
    var pendingStart = 0
    /// The request being read or handled.
    var current: ServerRequest?
    /// Reply bytes not yet written, in order; the first from `outputOffset` on.
    @exclusivity(unchecked) var output: [[UInt8]] = []
    var outputOffset = 0
    var queuedBytes = 0
    var closeAfterReply = false
    /// The client sent FIN: it may still read (half-close), but sends nothing more.
    var peerFinished = false
    var readPaused = false
    /// Set while `process` runs, so a reply sent from inside the handler does not
    /// re-enter it (pipelined requests are picked up by the running loop instead).
    var processing = false

    init(fd: Int32, peer: Peer, server: HTTPServer, limits: RequestParser.Limits) {
        self.fd = fd
        self.peer = peer
        self.server = server
        parser = RequestParser(limits: limits)
        since = Clock.now()
        let me = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(server.loop.base, fd, Int16(EV_READ | EV_PERSIST), Connection.readCallback, me)
        writeEvent = event_new(server.loop.base, fd, Int16(EV_WRITE | EV_PERSIST), Connection.writeCallback, me)
        timer = event_new(server.loop.base, -1, 0, Connection.timerCallback, me)
        event_add(readEvent, nil)
        arm(server.settings.idleTimeout)
    }

    var isOpen: Bool { state != .closed }

    /// Evictable under descriptor pressure: nothing of a request is being handled or sent.
    var isWaitingForClient: Bool { state == .idle || state == .reading || state == .lingering }

    // MARK: reading

    /// EV_READ
    static let readCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().readable()
    }

    func readable() {
        let scratch = server.scratch
        let n = read(fd, scratch.baseAddress, scratch.count)
        if state == .lingering {
            lingered += max(0, n)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || lingered > Connection.lingerBytes { close() }
            return
        }
        if n > 0 {
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            pending.append(contentsOf: UnsafeRawBufferPointer(start: scratch.baseAddress, count: n))
            if state == .idle || state == .reading {
                process()
            } else if pending.count - pendingStart > server.settings.maxHeaderBytes + Connection.readAhead {
                // Pipelined input beyond this waits in the kernel until the reply is out.
                pauseReading()
            }
        } else if n == 0 {
            endOfInput()
        } else if errno != EAGAIN && errno != EINTR {
            close()
        }
    }

    /// Bytes read beyond one head while a request is handled (pipelining).
    static let readAhead = 64 << 10

    /// Lingering after a final reply ends after this long or this many dropped bytes.
    static let lingerSeconds = 2.0
    static let lingerBytes = 64 << 20
    var lingered = 0

    /// The client sent FIN. Before or inside a request there is nobody to answer; after
    /// a complete one it still gets its reply (half-close), then the connection ends.
    func endOfInput() {
        pauseReading()
        peerFinished = true
        switch state {
        case .idle, .reading, .lingering, .streaming: close()
        case .handling, .writing: closeAfterReply = true
        case .closed: break
        }
    }

    func pauseReading() {
        guard !readPaused else { return }
        readPaused = true
        event_del(readEvent)
    }

    func resumeReading() {
        guard readPaused, !peerFinished, state != .closed else { return }
        readPaused = false
        event_add(readEvent, nil)
    }

    /// Parses what is pending, dispatching each complete request, until more bytes are
    /// needed or a request is with the handler.
    func process() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        while state == .idle || state == .reading {
            let step: (consumed: Int, event: RequestParser.Event?)
            do throws(HTTPParseError) {
                step = try pending.withUnsafeBufferPointer { all throws(HTTPParseError) in
                    try parser.next(UnsafeBufferPointer(rebasing: all[pendingStart...]))
                }
            } catch {
                fail(error)
                return
            }
            let start = pendingStart
            pendingStart += step.consumed
            guard let event = step.event else {
                if step.consumed == 0 { break }
                continue
            }
            switch event {
            case .head(let head):
                current = ServerRequest(head: head, failure: nil, connection: self)
                if case .length(let length) = head.framing, length <= parser.limits.maxBodyBytes {
                    current?.body.reserveCapacity(length)
                }
                // The 100 goes out only for a body the parser will read (an oversize one is
                // refused with 413 on the next step) and that has not started arriving.
                if head.expectsContinue, head.version == .http11, parser.willReadBody, pendingStart == pending.count,
                   !server.budget.isOverloaded {
                    queue(Connection.continueLine)
                }
            case .body(let range):
                current?.body.append(contentsOf: pending[(start + range.lowerBound)..<(start + range.upperBound)])
            case .end:
                dispatch()
            }
        }
        if state == .idle && !parser.isIdle {
            // The first bytes of a request: it has `client_idle` to arrive whole.
            state = .reading
            arm(server.settings.idleTimeout)
        }
    }

    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The request cannot be read: its refusal is the handler's to write (DESIGN §3),
    /// and the connection ends after it.
    func fail(_ error: HTTPParseError) {
        let head = current?.head
        current = ServerRequest(head: head, failure: error, connection: self)
        closeAfterReply = true
        pauseReading()
        pending = []
        pendingStart = 0
        dispatch()
    }

    func dispatch() {
        guard let request = current else { return }
        state = .handling
        disarm()
        server.handler(request)
    }
}

/// The client end of a connection.
struct Peer {
    var storage: sockaddr_storage
    var isUnix: Bool { Int32(storage.ss_family) == AF_UNIX }

    /// The numeric address (`127.0.0.1`, `::1`), or `unix` for a Unix-socket peer.
    var address: String {
        if isUnix { return "unix" }
        return ListeningSocket.numericHost(storage)
    }
}
