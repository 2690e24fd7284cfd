import HTTPCore
#if canImport(Glibc)
import Glibc
#endif
internal import CLibevent

/// Shaped replies (DESIGN §3): held for their delay, paced to their rate by this writer
/// on every byte (each reply on a keep-alive connection alike), cut short or reset.
extension Connection {
    func shapedReply(_ request: ServerRequest, head: [UInt8], body: [UInt8], shaping: ReplyShaping) -> ServerRequest.Delivery {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard machine.isOpen, let timer = PaceTimer(base: server.loop.base, owner: me, callback: Connection.paceCallback,
                                                    budget: server.budget) else {
            close()
            request.connection = nil
            return .gone
        }
        replyTimer = timer
        machine.shaping.reply = Pace(shaping, now: Clock.now())
        switch shaping.ending {
        case .reset:
            break
        case .truncate:
            queueShaped([head, Array(body.prefix(body.count / 2))])
        case .whole:
            queueShaped([head, body])
        }
        // With nothing to wait for, the reply can end inside `pace`: learn how.
        var endedNow: Bool?
        request.onFinish = { endedNow = $0 }
        pace()
        request.onFinish = nil
        if let endedNow { return endedNow ? .delivered : .gone }
        guard machine.isOpen else {
            request.connection = nil
            return .gone
        }
        return .pending
    }

    /// Queues without writing: the pacer decides when bytes leave.
    func queueShaped(_ parts: [[UInt8]]) {
        for part in parts where !part.isEmpty {
            output.append(part)
            charge(part.count)
        }
    }

    /// evtimer: the pacer's next step is due.
    static let paceCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().pace()
    }

    /// Sends what the pacer allows now, then waits for its next step, for the socket, or
    /// ends the reply.
    func pace() {
        guard let pace = machine.shaping.reply, let timer = replyTimer, machine.isOpen else { return }
        let now = Clock.now()
        if now >= pace.giveUpAt { return close() }
        if now >= pace.start, pace.ending == .reset { return reset() }
        if pace.ending != .reset {
            let allowed = pace.allowance(now: now)
            if allowed > 0, !output.isEmpty {
                guard let n = writeOutput(limit: allowed) else { return }
                machine.shaping.reply?.sent += n
                if n < allowed, !output.isEmpty {
                    // The socket is full: the client sets the pace now, within `client_idle`.
                    events?.watchWrite()
                    arm(machine.awaitingDrain(idleTimeout: server.settings.idleTimeout))
                    return
                }
            }
            events?.stopWriting()
            if output.isEmpty {
                machine.shaping.reply = nil
                replyTimer = nil
                return drained()
            }
        }
        let wait = max((machine.shaping.reply ?? pace).wait(now: Clock.now()), 0.001)
        guard timer.wake(after: wait) else { return close() }
        arm(wait + machine.awaitingDrain(idleTimeout: server.settings.idleTimeout))
    }

    /// Ends the connection with a reset (RST), as a dropped link does.
    func reset() {
        var lingering = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lingering, socklen_t(MemoryLayout<linger>.size))
        close()
    }
}

/// Request bodies read at `network.up`'s pace: reading pauses between steps, so the
/// client's own sending slows (TCP pushes back), and a body that arrived at once is handed
/// over when it would have arrived at that pace.
extension Connection {
    func paceUpload(_ head: RequestHead) {
        guard let rate = server.uploadRate?(head, peerAddress, peer.isUnix) else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let timer = PaceTimer(base: server.loop.base, owner: me, callback: Connection.uploadCallback, budget: server.budget) else { return }
        uploadTimer = timer
        machine.shaping.upload = Pace(ReplyShaping(bytesPerSecond: rate), now: Clock.now())
    }

    func waitForUpload(_ pace: Pace) {
        events?.stopReading()
        if uploadTimer?.wake(after: max(pace.wait(now: Clock.now()), 0.001)) != true { close() }
    }

    /// evtimer: the upload may go on, or a held request is due.
    static let uploadCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().uploadStep()
    }

    func uploadStep() {
        guard machine.isOpen else { return }
        if let held = machine.shaping.held { return dispatch(held) }
        watchRead()
    }
}
