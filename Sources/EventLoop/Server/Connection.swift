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
    unowned let server: HTTPServer
    private(set) var state = State.idle
    private var parser: RequestParser
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private var timer: OpaquePointer?
    /// When the current deadline was armed (for eviction: the oldest go first).
    private(set) var since: Double
    /// Unparsed input (pipelined or partial requests) from `pendingStart` on.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    /// The request being read or handled.
    private var current: ServerRequest?
    /// Reply bytes not yet written, in order; the first from `outputOffset` on.
    private var output: [[UInt8]] = []
    private var outputOffset = 0
    private(set) var queuedBytes = 0
    private var closeAfterReply = false
    /// The client sent FIN: it may still read (half-close), but sends nothing more.
    private var peerFinished = false
    private var readPaused = false
    /// Set while `process` runs, so a reply sent from inside the handler does not
    /// re-enter it (pipelined requests are picked up by the running loop instead).
    private var processing = false

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

    private func readable() {
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
    private var lingered = 0

    /// The client sent FIN. Before or inside a request there is nobody to answer; after
    /// a complete one it still gets its reply (half-close), then the connection ends.
    private func endOfInput() {
        pauseReading()
        peerFinished = true
        switch state {
        case .idle, .reading, .lingering: close()
        case .streaming: close()
        case .handling, .writing: closeAfterReply = true
        case .closed: break
        }
    }

    private func pauseReading() {
        guard !readPaused else { return }
        readPaused = true
        event_del(readEvent)
    }

    private func resumeReading() {
        guard readPaused, !peerFinished, state != .closed else { return }
        readPaused = false
        event_add(readEvent, nil)
    }

    /// Parses what is pending, dispatching each complete request, until more bytes are
    /// needed or a request is with the handler.
    private func process() {
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
                if head.expectsContinue && head.framing != .none && head.version == .http11 && pendingStart == pending.count {
                    continueExpected(head)
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

    /// `Expect: 100-continue` for a body that will be read: the 100 goes out at once.
    /// (One over the limit never gets it: the parser refuses it next, with 413.)
    private func continueExpected(_ head: RequestHead) {
        if case .length(let length) = head.framing, length > parser.limits.maxBodyBytes { return }
        if server.budget.isOverloaded { return }
        queue(Connection.continueLine)
    }

    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The request cannot be read: its refusal is the handler's to write (DESIGN §3),
    /// and the connection ends after it.
    private func fail(_ error: HTTPParseError) {
        let head = current?.head
        current = ServerRequest(head: head, failure: error, connection: self)
        closeAfterReply = true
        pauseReading()
        pending = []
        pendingStart = 0
        dispatch()
    }

    private func dispatch() {
        guard let request = current else { return }
        state = .handling
        disarm()
        server.handler(request)
    }

    // MARK: replying

    func reply(_ request: ServerRequest, status: Int, headers: [(String, String)], body: [UInt8]) -> ServerRequest.Delivery {
        let bodyless = request.method == "HEAD" || status == 204 || status == 304 || (100...199).contains(status)
        if request.failure != nil || peerFinished || server.isStopping || !(request.head?.keepAlive ?? false) {
            closeAfterReply = true
        }
        var head = ReplyHead(status: status, capacity: 160 + headers.count * 48)
        for (name, value) in headers {
            if name.utf8.count == 10, name.lowercased() == "connection" {
                if value.lowercased() == "close" { closeAfterReply = true }
                continue
            }
            head.add(name, value)
        }
        head.add("Date", server.date())
        if !bodyless { head.addContentLength(body.count) }
        if closeAfterReply {
            head.add("Connection", "close")
        } else if request.head?.version == .http10 {
            head.add("Connection", "keep-alive")
        }
        head.end()
        state = .writing
        current = request
        let sendBody = bodyless ? [] : body
        if sendBody.count <= Connection.coalesceLimit {
            var bytes = head.bytes
            bytes.append(contentsOf: sendBody)
            queue(bytes)
        } else {
            queue(head.bytes)
            queue(sendBody)
        }
        guard state != .closed else {
            request.connection = nil
            return .gone
        }
        if output.isEmpty {
            // All of it is with the kernel. A client that closed its end completely (not a
            // half-close) resets the connection on the first bytes it receives; on loopback
            // that is visible at once.
            if peerFinished && socketError() != 0 {
                close()
                request.connection = nil
                return .gone
            }
            replyDrained()
            return .delivered
        }
        arm(server.settings.idleTimeout)
        return .pending
    }

    /// Bodies up to this are copied behind the head and leave in one write.
    static let coalesceLimit = 16 << 10

    /// The whole reply left: the next request may start.
    private func replyDrained() {
        let request = current
        current = nil
        if let request, request.onFinish != nil || request.connection != nil { request.finish(delivered: true) }
        if closeAfterReply {
            closeGracefully()
            return
        }
        state = .idle
        arm(server.settings.idleTimeout)
        resumeReading()
        if !processing, pendingStart < pending.count { process() }
    }

    // MARK: streams

    func startStream(_ request: ServerRequest, status: Int, headers: [(String, String)], sendBuffer: Int32) {
        var size = sendBuffer
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var head = ReplyHead(status: status, capacity: 256)
        for (name, value) in headers { head.add(name, value) }
        head.add("Date", server.date())
        head.add("Transfer-Encoding", "chunked")
        head.end()
        state = .streaming
        current = request
        disarm()
        queue(head.bytes)
    }

    func writeChunk(_ bytes: [UInt8]) {
        var framed = Array(String(bytes.count, radix: 16).utf8)
        framed.reserveCapacity(framed.count + bytes.count + 4)
        framed += [0x0D, 0x0A]
        framed += bytes
        framed += [0x0D, 0x0A]
        queue(framed)
    }

    /// The last chunk; the connection closes once it has left.
    func endStream() {
        guard state == .streaming else { return }
        current = nil
        closeAfterReply = true
        state = .writing
        queue(Array("0\r\n\r\n".utf8))
        if output.isEmpty { closeGracefully() } else { arm(server.settings.idleTimeout) }
    }

    // MARK: writing

    /// Writes at once what the socket takes; the rest waits for EV_WRITE.
    private func queue(_ bytes: [UInt8]) {
        guard state != .closed, !bytes.isEmpty else { return }
        if output.isEmpty {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n == bytes.count { return }
            // On an error the write event fires at once and closes the connection there,
            // never inside the caller (which may be starting a stream).
            output.append(bytes)
            outputOffset = max(0, n)
            charge(bytes.count - max(0, n))
            event_add(writeEvent, nil)
        } else {
            output.append(bytes)
            charge(bytes.count)
        }
    }

    private func charge(_ bytes: Int) {
        queuedBytes += bytes
        server.budget.chargeAnyway(bytes)
    }

    /// EV_WRITE
    static let writeCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().writable()
    }

    private func writable() {
        var vectors: [iovec] = []
        vectors.reserveCapacity(min(output.count, 16))
        var keep: [UnsafeRawBufferPointer] = []
        _ = keep
        for (index, chunk) in output.prefix(16).enumerated() {
            let skip = index == 0 ? outputOffset : 0
            chunk.withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip), iov_len: raw.count - skip))
            }
        }
        // The arrays are not mutated while writev runs, so their storage stays put.
        let n = writev(fd, vectors, Int32(vectors.count))
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            close()
            return
        }
        var left = n
        queuedBytes -= n
        server.budget.release(n)
        while left > 0, let first = output.first {
            let remaining = first.count - outputOffset
            if left >= remaining {
                left -= remaining
                output.removeFirst()
                outputOffset = 0
            } else {
                outputOffset += left
                left = 0
            }
        }
        guard output.isEmpty else { return }
        event_del(writeEvent)
        drained()
    }

    /// Everything queued has reached the socket.
    private func drained() {
        switch state {
        case .writing:
            if current == nil && closeAfterReply { closeGracefully() } else { replyDrained() }
        case .streaming:
            let handler = current?.onDrained
            handler?()
        default: break
        }
    }

    // MARK: deadlines

    private func arm(_ seconds: Double) {
        since = Clock.now()
        var tv = timeval(seconds: seconds)
        event_add(timer, &tv)
    }

    private func disarm() { event_del(timer) }

    /// evtimer: a deadline passed.
    static let timerCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().deadlinePassed()
    }

    private func deadlinePassed() {
        switch state {
        case .idle, .reading, .writing, .lingering:
            // Too slow to send its request, or to take its reply (or to close after it).
            let request = current
            close()
            request?.finish(delivered: false)
        case .handling, .streaming, .closed:
            break
        }
    }

    // MARK: closing

    private func socketError() -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error
    }

    /// After a reply that ends the connection: our FIN follows the bytes, and input is
    /// drained until the client closes (bounded), so the kernel does not reset the reply
    /// away before the client has read it.
    private func closeGracefully() {
        shutdown(fd, Int32(SHUT_WR))
        if peerFinished {
            close()
            return
        }
        state = .lingering
        current = nil
        pending = []
        pendingStart = 0
        if readPaused {
            readPaused = false
            event_add(readEvent, nil)
        }
        arm(Connection.lingerSeconds)
    }

    /// Closes at once. A request with the handler learns of it when it replies.
    func close() {
        guard state != .closed else { return }
        let wasStreaming = state == .streaming
        let request = current
        state = .closed
        current = nil
        for event in [readEvent, writeEvent, timer] where event != nil {
            event_del(event)
            event_free(event)
        }
        readEvent = nil
        writeEvent = nil
        timer = nil
        if queuedBytes > 0 { server.budget.release(queuedBytes) }
        queuedBytes = 0
        output = []
        pending = []
        Glibc.close(fd)
        withExtendedLifetime(self) {
            server.connectionClosed(self)
            if wasStreaming {
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
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = storage
        withUnsafePointer(to: &raw) { pointer in
            if Int32(storage.ss_family) == AF_INET6 {
                _ = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafePointer(to: v6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) }
                }
            } else {
                _ = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
