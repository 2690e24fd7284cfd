import HTTPCore
import Serializers
import Telemetry
import Upstream

/// What a WebSocket relay moves: bytes from each side read as frames, relayed in order,
/// with backpressure both ways and every way a WebSocket ends.
extension WebSocketRelay {
    // MARK: the upstream's side

    /// Reads while there is room for what is read; writes while bytes wait.
    func watchUpstream() {
        tunnel?.watch(read: !upstreamReadPaused, write: !toUpstream.isEmpty) { [weak self] readable, writable in
            guard let self else { return }
            if writable { self.flushUpstream() }
            if readable { self.readUpstream() }
        }
    }

    func flushUpstream() {
        guard let tunnel, !toUpstream.isEmpty else { return }
        var sent = 0
        while sent < toUpstream.count {
            let io = toUpstream.withUnsafeBytes { tunnel.send(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            switch io {
            case .moved(let n): sent += n
            case .wouldBlock: break
            case .ended, .failed: return upstreamGone(nil)
            }
            if io == .wouldBlock { break }
        }
        toUpstream.removeFirst(sent)
        if clientInputPaused, toUpstream.count < Self.highWater / 2 {
            clientInputPaused = false
            client.resumeInput()
        }
        watchUpstream()
    }

    /// Everything the socket (and TLS beneath it) holds now: a TLS record already read
    /// into libcurl would not wake the loop again.
    func readUpstream() {
        let scratch = pipeline.tunnelScratch
        while let tunnel, state != .ended, !upstreamReadPaused {
            switch tunnel.receive(into: scratch) {
            case .moved(let n):
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[..<n])
                if state == .handshaking { handshakeRead(Array(bytes), end: false) } else { upstreamBytes(bytes) }
                // A short read took all there was: the socket (or the one TLS record libcurl
                // read) is empty, and the loop wakes again for more.
                if n < scratch.count { return }
            case .wouldBlock:
                return
            case .ended:
                if state == .handshaking { return handshakeRead([], end: true) }
                return upstreamGone(nil)
            case .failed(let message):
                if state == .handshaking { return handshakeRead([], end: true) }
                return upstreamGone(message)
            }
        }
    }

    func upstreamBytes(_ bytes: UnsafeRawBufferPointer) {
        do throws(WebSocketViolation) {
            try fromUpstream.feed(bytes) { frame in relayToClient(frame) }
        } catch {
            return violation(error, byClient: false)
        }
        if state == .open, client.bufferedBytes >= Self.highWater, !upstreamReadPaused {
            upstreamReadPaused = true
            watchUpstream()
        }
    }

    func clientDrained() {
        guard upstreamReadPaused, state == .open else { return }
        upstreamReadPaused = false
        watchUpstream()
        readUpstream()
    }

    // MARK: the client's side

    func clientInput(_ bytes: UnsafeRawBufferPointer) {
        guard state == .open else { return }
        do throws(WebSocketViolation) {
            try fromClient.feed(bytes) { frame in relayToUpstream(frame) }
        } catch {
            return violation(error, byClient: true)
        }
        flushUpstream()
        if state == .open, toUpstream.count >= Self.highWater, !clientInputPaused {
            clientInputPaused = true
            client.pauseInput()
        }
    }

    // MARK: frames

    private func relayToUpstream(_ frame: WebSocketFrame) {
        guard state == .open, !upstreamClosed || frame.isClose else { return }
        lastFrame = pipeline.clock.now()
        toUpstream += frame.raw
        if frame.isClose {
            clientClosed = true
            closeCode = closeCode ?? frame.closeCode
            // The upstream answers it; if it never does, `closeWait` ends both.
            if upstreamClosed { return finish(label: "ok", error: nil) }
            return arm(Self.closeWait)
        }
        guard !frame.isControl else { return }
        recording?.add(frame, sent: true, now: pipeline.clock.wall())
        bytesToUpstream += frame.payloadCount
        note(frame.opcode, frame, direction: "send")
        if frame.fin {
            toUpstreamCount += 1
            counters?.message(toClient: false)
        }
    }

    private func relayToClient(_ frame: WebSocketFrame) {
        guard state == .open, !clientClosed || frame.isClose else { return }
        lastFrame = pipeline.clock.now()
        if frame.isClose {
            upstreamClosed = true
            closeCode = closeCode ?? frame.closeCode
            client.write(frame.raw)
            if clientClosed { return finish(label: "ok", error: nil) }
            return arm(Self.closeWait)
        }
        if frame.isControl { return client.write(frame.raw) }
        recording?.add(frame, sent: false, now: pipeline.clock.wall())
        bytesFromUpstream += frame.payloadCount
        if route.messageSerializer != nil, frame.opcode == WebSocketOpcode.text || (frame.opcode == 0 && textMessage != nil) {
            return normalize(frame)
        }
        bytesToClient += frame.payloadCount
        client.write(frame.raw)
        note(frame.opcode, frame, direction: "receive")
        if frame.fin { delivered() }
    }

    private func delivered() {
        toClient += 1
        counters?.message(toClient: true)
    }

    /// `normalize: json`: an upstream text message, reassembled, as normalized JSON; a
    /// refused one follows `stream.on_invalid`.
    private func normalize(_ frame: WebSocketFrame) {
        textMessage = (textMessage ?? []) + frame.payload
        guard frame.fin, let message = textMessage else { return }
        textMessage = nil
        let result = route.serializeEvent(message, messages: true)
        if result.succeeded, let value = result.value {
            return sendText(value.bytes)
        }
        counters?.invalid()
        switch route.stream.onInvalid {
        case .pass:
            sendText(message)
        case .drop:
            counters?.dropped()
        case .errorEvent, .close:
            let failure = ProxyFailure.response(result.error ?? .serializationFailed(serializer: "json", detail: "not JSON", underlying: nil),
                                                upstream: UpstreamEvidence(UpstreamResponse(status: 200, contentType: nil, body: message),
                                                                           shownURL: nil, parsed: nil))
            sendText(ProblemDocument.render(failure, route: route.name, requestID: context.requestID))
            if route.stream.onInvalid == .close {
                closeBoth(client: WebSocketClose.invalidData, upstream: WebSocketClose.goingAway,
                          reason: "a message the serializer refused ended the WebSocket (stream.on_invalid: close)", label: "invalid_event")
            }
        }
    }

    private func sendText(_ bytes: [UInt8]) {
        bytesToClient += bytes.count
        client.write(WebSocketFrameWriter.frame(opcode: WebSocketOpcode.text, payload: bytes, mask: nil))
        pipeline.noteStreamEvent(&recentEvents, context, kind: "websocket", direction: "receive", label: "text", data: bytes)
        delivered()
    }

    /// A data frame for the inspector (its payload unmasked only while someone watches).
    private func note(_ opcode: UInt8, _ frame: WebSocketFrame, direction: String) {
        guard pipeline.shared.hub.hasSubscribers else { return }
        let label = opcode == WebSocketOpcode.text ? "text" : opcode == WebSocketOpcode.binary ? "binary" : "continuation"
        pipeline.noteStreamEvent(&recentEvents, context, kind: "websocket", direction: direction, label: label, data: frame.payload)
    }

    // MARK: ends

    /// A side broke the protocol or sent a message over `max_message`: that side gets the
    /// code the violation calls for; the other 1009 for a message too big, else 1001.
    private func violation(_ error: WebSocketViolation, byClient: Bool) {
        let other = error.closeCode == WebSocketClose.tooBig ? WebSocketClose.tooBig : WebSocketClose.goingAway
        let label = error.closeCode == WebSocketClose.tooBig ? "websocket_message_too_big" : "websocket_protocol_error"
        closeBoth(client: byClient ? error.closeCode : other, upstream: byClient ? other : error.closeCode,
                  reason: (byClient ? "the client: " : "the upstream: ") + error.reason, label: label)
    }

    /// serializerd ends the WebSocket: a close frame to each side that has not closed.
    func closeBoth(client clientCode: Int, upstream upstreamCode: Int, reason: String, label: String) {
        guard state == .open else { return }
        closeCode = closeCode ?? clientCode
        if !upstreamClosed { client.write(WebSocketClose.frame(code: clientCode, reason: reason, mask: nil)) }
        if !clientClosed { toUpstream += WebSocketClose.frame(code: upstreamCode, reason: reason, mask: Self.maskKey()) }
        finish(label: label, error: reason)
    }

    /// The upstream's connection ended without its close frame (or the daemon stops).
    func upstreamGone(_ message: String?) {
        switch state {
        case .connecting, .handshaking:
            return handshakeRead([], end: true)
        case .open:
            break
        case .ended:
            return
        }
        closeTunnel()
        if upstreamClosed { return finish(label: "ok", error: nil) }
        closeCode = closeCode ?? WebSocketClose.goingAway
        let reason = "the upstream closed the connection" + (message.map { ": " + $0 } ?? "")
        if !clientClosed { client.write(WebSocketClose.frame(code: WebSocketClose.goingAway, reason: "the upstream went away", mask: nil)) }
        finish(label: "upstream_unavailable", error: reason)
    }

    /// The client's connection ended (its close frame may have come first).
    func clientGone() {
        guard state == .open else {
            if state != .ended { state = .ended }
            return
        }
        if clientClosed { return finish(label: "ok", error: nil) }
        closeCode = closeCode ?? WebSocketClose.goingAway
        if !upstreamClosed { toUpstream += WebSocketClose.frame(code: WebSocketClose.goingAway, reason: "the client went away", mask: Self.maskKey()) }
        finish(label: "client_gone", error: "the client closed the connection without a close frame")
    }

    /// Frames serializerd sends the upstream are masked, as a client's are (RFC 6455 §5.3).
    static func maskKey() -> (UInt8, UInt8, UInt8, UInt8) {
        let key = UInt32.random(in: .min ... .max)
        return (UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF))
    }
}
