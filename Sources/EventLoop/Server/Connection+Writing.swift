internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Replies, streams and the output queue: what leaves a connection, in order.
extension Connection {
    // MARK: replying

    func reply(_ request: ServerRequest, status: Int, headers: HeaderFields, body: [UInt8],
               recordNow: () -> Void, shaping: ReplyShaping? = nil) -> ServerRequest.Delivery {
        let bodyless = ReplyContent.isAbsent(method: request.method, status: status)
        let peerFinished = machine.peerFinished
        var closeRequested = false
        var head = ReplyHead(status: status, capacity: 160 + headers.bytes.count)
        // Exactly one Date: the first valid one given (an upstream's), else ours.
        var dated = false
        if let verbatimDated = head.addVerbatim(headers) { dated = verbatimDated } else { headers.forEach { name, value in
            if HeaderNames.isConnection(name) {
                if ByteClass.equalsIgnoringCase(value, "close") { closeRequested = true }
                return
            }
            if name.count == 4, ByteClass.equalsIgnoringCase(name, "date") {
                if dated || !HTTPDate.isValid(String(decoding: value, as: UTF8.self)) { return }
                dated = true
            }
            head.add(name: name, value: value)
        } }
        if !dated { head.add("Date", server.date()) }
        if ReplyContent.framesLength(method: request.method, status: status) { head.addContentLength(bodyless ? 0 : body.count) }
        // A truncated reply closes as a broken one would: without announcing it.
        let cut = shaping.map { $0.ending != .whole } ?? false
        if machine.replying(keepAliveAsked: request.failure == nil && request.head?.keepAlive == true,
                            closeRequested: closeRequested || cut, stopping: server.isStopping) {
            if !cut { head.add("Connection", "close") }
        } else if request.head?.version == .http10 {
            head.add("Connection", "keep-alive")
        }
        head.end()
        current = request
        let sendBody = bodyless ? [] : body
        if let shaping { return shapedReply(request, head: head.bytes, body: sendBody, shaping: shaping) }
        // A small reply to a client that is still there will reach the kernel whole: its
        // event is recorded before the bytes leave, so a client that has read the reply
        // finds it in /metrics (a larger one is recorded when it has drained, a half-closed
        // client's once the write shows whether it is still there).
        let recordedFirst = !peerFinished && output.isEmpty && head.count + sendBody.count <= Connection.recordFirstLimit
        if recordedFirst { recordNow() }
        if sendBody.count <= Connection.coalesceLimit {
            queue(head.take(appending: sendBody))
        } else {
            // One writev: the head in a send of its own would leave as a segment of its own
            // (and a syscall more).
            queue([head.bytes, sendBody])
        }
        guard machine.isOpen else {
            request.connection = nil
            return recordedFirst ? .recorded : .gone
        }
        if recordedFirst {
            if output.isEmpty { drained() } else { arm(machine.awaitingDrain(idleTimeout: server.settings.idleTimeout)) }
            return .recorded
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
            drained()
            return .delivered
        }
        arm(machine.awaitingDrain(idleTimeout: server.settings.idleTimeout))
        return .pending
    }

    /// Bodies up to this are copied behind the head and leave in one write.
    static let coalesceLimit = 16 << 10

    /// Replies up to this fit a fresh socket's send buffer with room to spare.
    static let recordFirstLimit = 8 << 10

    /// Everything queued has reached the socket: a stream wants more, or the reply is
    /// out and the next request may start (or the connection ends).
    func drained() {
        let settings = server.settings
        let step = machine.drained(idleTimeout: settings.idleTimeout, limits: settings.parserLimits)
        switch step {
        case .none:
            return
        case .streamDrained:
            let handler = current?.onDrained
            handler?()
            return
        case .nextRequest, .shutdownAndClose, .linger:
            break
        }
        let request = current
        current = nil
        if let request, request.onFinish != nil || request.connection != nil { request.finish(delivered: true) }
        switch step {
        case .nextRequest(let deadline, let resumeReading, let parsePending):
            arm(deadline)
            if resumeReading { watchRead() }
            if parsePending && !parsing { process() }
        case .shutdownAndClose:
            // Our FIN follows the bytes.
            shutdown(fd, Int32(SHUT_WR))
            close()
        case .linger(let deadline, let resumeReading):
            // Input is drained until the client closes (bounded), so the kernel does not
            // reset the reply away before the client has read it.
            shutdown(fd, Int32(SHUT_WR))
            if resumeReading { watchRead() }
            arm(deadline)
        case .none, .streamDrained:
            break
        }
    }

    func watchRead() {
        guard let events else { return }
        if !events.watchRead() { close() }
    }

    // MARK: streams

    func startStream(_ request: ServerRequest, status: Int, headers: HeaderFields, sendBuffer: Int32) {
        var size = sendBuffer
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var head = ReplyHead(status: status, capacity: 256)
        headers.forEach { name, value in head.add(name: name, value: value) }
        head.add("Date", server.date())
        // HTTP/1.0 has no chunked coding: the stream ends where the connection does.
        streamChunked = request.head?.version != .http10
        head.add(streamChunked ? "Transfer-Encoding" : "Connection", streamChunked ? "chunked" : "close")
        head.end()
        machine.streamStarted()
        current = request
        events?.disarm()
        queue(head.bytes)
    }

    /// With nothing waiting, the size line (on the stack), the bytes and CRLF leave in one
    /// writev: a live stream writes a chunk per event or two, and neither copies nor
    /// allocates for it. Only what the socket did not take is kept.
    func writeChunk(_ bytes: [UInt8]) {
        guard streamChunked else { return queue(bytes) }
        guard machine.isOpen, !bytes.isEmpty else { return }
        guard output.isEmpty else { return queue([Self.chunkSizeLine(bytes.count), bytes, Self.crlf]) }
        let digits = Self.hexDigits(bytes.count)
        let sent = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { line in
            Self.writeHex(bytes.count, digits: digits, into: line)
            line[digits] = 0x0D
            line[digits + 1] = 0x0A
            return bytes.withUnsafeBytes { body in
                Self.crlf.withUnsafeBytes { end in
                    withUnsafeTemporaryAllocation(of: iovec.self, capacity: 3) { vectors in
                        vectors[0] = iovec(iov_base: UnsafeMutableRawPointer(line.baseAddress!), iov_len: digits + 2)
                        vectors[1] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress!), iov_len: body.count)
                        vectors[2] = iovec(iov_base: UnsafeMutableRawPointer(mutating: end.baseAddress!), iov_len: 2)
                        return writev(fd, vectors.baseAddress, 3)
                    }
                }
            }
        }
        if sent == digits + bytes.count + 4 { return }
        keepUnsent([Self.chunkSizeLine(bytes.count), bytes, Self.crlf], sent: max(0, sent))
    }

    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// `<size in hex>` CR LF, made without a String.
    static func chunkSizeLine(_ size: Int) -> [UInt8] {
        let digits = hexDigits(size)
        return [UInt8](unsafeUninitializedCapacity: digits + 2) { buffer, count in
            writeHex(size, digits: digits, into: buffer)
            buffer[digits] = 0x0D
            buffer[digits + 1] = 0x0A
            count = digits + 2
        }
    }

    private static func hexDigits(_ size: Int) -> Int {
        var digits = 1
        while size >> (4 * digits) > 0 { digits += 1 }
        return digits
    }

    private static func writeHex(_ size: Int, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        for k in 0..<digits { buffer[k] = Hex.digit(UInt8(truncatingIfNeeded: size >> (4 * (digits - 1 - k)))) }
    }

    /// The last chunk; the connection closes once it has left.
    func endStream() {
        guard machine.streamEnding() else { return }
        tunnelInput = nil
        current = nil
        if streamChunked { queue(Array("0\r\n\r\n".utf8)) }
        if output.isEmpty { drained() } else { arm(machine.awaitingDrain(idleTimeout: server.settings.idleTimeout)) }
    }

    // MARK: writing

    /// Writes at once what the socket takes; the rest waits for EV_WRITE.
    func queue(_ bytes: [UInt8]) {
        guard machine.isOpen, !bytes.isEmpty else { return }
        if output.isEmpty {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n == bytes.count { return }
            // On an error the write event fires at once and closes the connection there,
            // never inside the caller (which may be starting a stream).
            output.append(bytes)
            outputOffset = max(0, n)
            charge(bytes.count - max(0, n))
            watchWrite()
        } else {
            output.append(bytes)
            charge(bytes.count)
        }
    }

    /// Several buffers in order, as `queue` does for one.
    func queue(_ parts: [[UInt8]]) {
        guard machine.isOpen else { return }
        guard output.isEmpty else {
            for part in parts where !part.isEmpty {
                output.append(part)
                charge(part.count)
            }
            return
        }
        var vectors: [iovec] = []
        vectors.reserveCapacity(parts.count)
        for part in parts where !part.isEmpty {
            part.withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress!), iov_len: raw.count))
            }
        }
        // The arrays are not mutated while writev runs, so their storage stays put.
        keepUnsent(parts, sent: max(0, writev(fd, vectors, Int32(vectors.count))))
    }

    /// What a write into an empty queue left of `parts` waits for the socket.
    private func keepUnsent(_ parts: [[UInt8]], sent: Int) {
        var sent = sent
        for part in parts where !part.isEmpty {
            if sent >= part.count {
                sent -= part.count
                continue
            }
            if output.isEmpty { outputOffset = sent }
            output.append(part)
            charge(part.count - sent)
            sent = 0
        }
        // On an error the write event fires at once and closes the connection there.
        if !output.isEmpty { watchWrite() }
    }

    func charge(_ bytes: Int) {
        queuedBytes += bytes
        server.budget.chargeAnyway(bytes)
    }

    /// EV_WRITE
    static let writeCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().writable()
    }

    func writable() {
        if machine.shaping.reply != nil { return pace() }
        guard writeOutput(limit: Int.max) != nil else { return }
        guard output.isEmpty else { return }
        events?.stopWriting()
        drained()
    }

    /// Writes up to `limit` queued bytes; how many left, or nil when the connection closed.
    func writeOutput(limit: Int) -> Int? {
        var vectors: [iovec] = []
        vectors.reserveCapacity(min(output.count, 16))
        var room = limit
        for (index, chunk) in output.prefix(16).enumerated() where room > 0 {
            let skip = index == 0 ? outputOffset : 0
            let take = min(chunk.count - skip, room)
            room -= take
            chunk.withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip), iov_len: take))
            }
        }
        // The arrays are not mutated while writev runs, so their storage stays put.
        let n = writev(fd, vectors, Int32(vectors.count))
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return 0 }
            close()
            return nil
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
        return n
    }

    /// Output waits for the socket. Never closes here, inside the caller (which may be
    /// starting a stream): without the event the deadline still ends a stalled reply.
    func watchWrite() {
        events?.watchWrite()
    }
}
