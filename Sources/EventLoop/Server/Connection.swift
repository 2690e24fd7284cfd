internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// One client connection on a worker's loop: the socket, its events and its output
/// queue around a `ConnectionMachine`, which decides every step. Requests go to the
/// server's handler one at a time; replies leave in order.
final class Connection {
    let fd: Int32
    let peer: Peer
    /// `peer.address`, formatted once: every proxied request on the connection needs it.
    lazy var peerAddress: String = peer.address
    unowned let server: HTTPServer
    // Touched only on the worker's thread and never while another access is open: the
    // runtime's exclusivity check on these is a measurable share of a small request.
    @exclusivity(unchecked) var machine: ConnectionMachine
    /// nil once closed.
    var events: ConnectionEvents?
    /// The request being handled, replied to or streamed.
    var current: ServerRequest?
    /// Reply bytes not yet written, in order; the first from `outputOffset` on.
    @exclusivity(unchecked) var output: [[UInt8]] = []
    var outputOffset = 0
    var queuedBytes = 0
    /// The open stream's body is chunked (false for an HTTP/1.0 client: close-delimited).
    var streamChunked = true
    /// Set while the connection is a tunnel (after a 101): input goes here as it is read.
    var tunnelInput: ((UnsafeRawBufferPointer) -> Void)?
    /// Set while `process` runs, so a reply sent from inside the handler does not
    /// re-enter it (pipelined requests are picked up by the running loop instead).
    var parsing = false
    /// What wakes the machine's paces (`machine.shaping`): set while a shaped reply is
    /// out, and while a request body is read at `network.up`'s pace.
    var replyTimer: PaceTimer?
    var uploadTimer: PaceTimer?

    /// nil when libevent cannot watch the socket; the caller closes it.
    init?(fd: Int32, peer: Peer, server: HTTPServer, limits: RequestParser.Limits) {
        self.fd = fd
        self.peer = peer
        self.server = server
        machine = ConnectionMachine(limits: limits, clock: Clock.now)
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let events = ConnectionEvents(base: server.loop.base, fd: fd, owner: me, read: Connection.readCallback,
                                            write: Connection.writeCallback, timer: Connection.timerCallback),
              events.watchRead(), events.arm(server.settings.idleTimeout) else { return nil }
        self.events = events
    }

    var isOpen: Bool { machine.isOpen }

    // MARK: reading

    /// EV_READ
    static let readCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().readable()
    }

    func readable() {
        let scratch = server.scratch
        if let tunnelInput { return tunnelReadable(tunnelInput) }
        var room = scratch.count
        if let upload = machine.shaping.upload {
            room = min(room, upload.allowance(now: Clock.now()))
            if room == 0 { return waitForUpload(upload) }
        }
        let n = read(fd, scratch.baseAddress, room)
        if n > 0 {
            machine.shaping.upload?.sent += n
            let bytes = UnsafeRawBufferPointer(start: scratch.baseAddress, count: n)
            switch machine.received(bytes, maxHeaderBytes: server.settings.maxHeaderBytes) {
            case .parse: process()
            case .keep: break
            case .pauseReading: events?.stopReading()
            case .close: close()
            }
        } else if n == 0 {
            switch machine.endOfInput() {
            case .close: close()
            case .pauseReading: events?.stopReading()
            case .none: break
            }
        } else if errno != EAGAIN && errno != EINTR {
            close()
        }
    }

    /// Parses what is pending, dispatching each complete request, until more bytes are
    /// needed or a request is with the handler.
    func process() {
        guard !parsing else { return }
        parsing = true
        defer { parsing = false }
        while true {
            switch machine.nextInput(idleTimeout: server.settings.idleTimeout, overloaded: server.budget.isOverloaded) {
            case .needMore(let deadline):
                if let deadline { arm(deadline) }
                if machine.shaping.upload == nil, let head = machine.headAwaitingBody { paceUpload(head) }
                return
            case .busy:
                return
            case .sendContinue:
                queue(Connection.continueLine)
            case .dispatch(let incoming):
                dispatch(incoming)
            case .refuse(let incoming):
                // Its refusal is the handler's to write (DESIGN §3); nothing more is read.
                events?.stopReading()
                dispatch(incoming)
            }
        }
    }

    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    func dispatch(_ incoming: ConnectionMachine.Incoming) {
        // A body that came with its head in one read is paced from now.
        if machine.shaping.upload == nil, machine.shaping.held == nil, !incoming.body.isEmpty, let head = incoming.head { paceUpload(head) }
        if let upload = machine.shaping.upload {
            // The body arrived faster than `up` allows: the handler gets it when it would have.
            let wait = upload.due(bytes: incoming.body.count, now: Clock.now())
            if wait > 0.001, machine.shaping.held == nil {
                machine.shaping.held = incoming
                events?.stopReading()
                if uploadTimer?.wake(after: wait) != true { close() }
                return
            }
            machine.shaping.upload = nil
            machine.shaping.held = nil
            uploadTimer = nil
            // Reading was paused for the pace, not for the machine: it resumes (a refused
            // request reads nothing more).
            if incoming.failure == nil { events?.watchRead() }
        }
        let request = ServerRequest(head: incoming.head, failure: incoming.failure, connection: self)
        request.body = incoming.body
        current = request
        events?.disarm()
        server.handler(request)
    }

    // MARK: deadlines

    func arm(_ seconds: Double) {
        guard let events else { return }
        // Without its deadline a connection could wait forever.
        if !events.arm(seconds) { close() }
    }

    /// evtimer: a deadline passed.
    static let timerCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().deadlinePassed()
    }

    func deadlinePassed() {
        // `close` tells a reply still being sent that it did not arrive.
        if machine.deadlinePassed() { close() }
    }

    // MARK: closing

    func socketError() -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error
    }

    /// Closes at once. A request with the handler learns of it when it replies.
    func close() {
        guard machine.isOpen else { return }
        let previous = machine.close()
        let request = current
        current = nil
        events = nil
        tunnelInput = nil
        replyTimer = nil
        uploadTimer = nil
        if queuedBytes > 0 { server.budget.release(queuedBytes) }
        queuedBytes = 0
        output = []
        Glibc.close(fd)
        withExtendedLifetime(self) {
            server.connectionClosed(self)
            if case .streaming = previous {
                request?.streamClosed()
            } else if let request, request.onFinish != nil {
                request.finish(delivered: false)
            }
        }
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
