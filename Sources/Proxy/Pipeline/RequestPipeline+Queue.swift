import EventLoop
import Resilience
import HTTPCore

/// Requests waiting in a route's queue (DESIGN §11), by their place's id: for a slot of
/// its gate, or (no gate) for the end of its throttle's delay.
struct QueuedRequest {
    let context: RequestContext
    let gate: UpstreamGate?
    let throttle: RouteThrottle?
    let timer: Timer?
}

extension RequestPipeline {
    /// Parks a request in its route's queue until its gate hands it a slot or
    /// `queue_timeout` passes; counted in flight meanwhile, so shutdown waits for it.
    func wait(_ context: RequestContext, id: UInt64, gate: UpstreamGate, route: Route, timeout: Double) {
        requestStarted()
        let timer = makeTimer? { [unowned self] in self.queueTimedOut(id) }
        timer?.schedule(after: timeout)
        queued[id] = QueuedRequest(context: context, gate: gate, throttle: nil, timer: timer)
    }

    /// Parks a request until the route's throttle lets it go (the upstream's pause, its
    /// token), `seconds` from now; false when this pipeline keeps no time (in-process),
    /// and then it is `overloaded`.
    func delay(_ context: RequestContext, seconds: Double, route: Route) -> Bool {
        delays &+= 1
        let id = Self.delayTag | delays
        guard let timer = makeTimer?({ [unowned self] in self.delayEnded(id) }) else {
            refuseQueued(context, route: route, retryAfter: seconds, hint: "The route's throttle would hold the request, and this pipeline keeps no time.")
            return false
        }
        requestStarted()
        route.throttle.delayStarted()
        timer.schedule(after: seconds)
        queued[id] = QueuedRequest(context: context, gate: nil, throttle: route.throttle, timer: timer)
        return true
    }

    /// Delay ids have the top bit set; a gate's never do (they count up from 1).
    private static let delayTag: UInt64 = 1 << 63

    /// A request's delay is over: on to its route's gate, if it has one, and the upstream.
    private func delayEnded(_ id: UInt64) {
        guard let waiting = queued.removeValue(forKey: id) else { return }
        waiting.throttle?.delayEnded()
        inFlightEnded()
        if shuttingDown {
            waiting.context.reply.problem(.unavailable, route: waiting.context.route?.name)
            return upstreamEnded()
        }
        resume(waiting.context)
    }

    /// A slot was handed to a request of this worker: it goes on to the upstream.
    func gateOpened(_ id: UInt64) {
        guard let waiting = queued.removeValue(forKey: id) else { return }
        waiting.timer?.cancel()
        inFlightEnded()
        let context = waiting.context
        context.gateSlot = waiting.gate
        leftQueue(context)
        if shuttingDown {
            leaveGate(context)
            context.reply.problem(.unavailable, route: context.route?.name)
            return upstreamEnded()
        }
        resume(context)
    }

    /// The wait passed `queue_timeout`: `overloaded`, unless a slot is already on its way
    /// (then it goes on when it arrives).
    private func queueTimedOut(_ id: UInt64) {
        guard let waiting = queued[id], waiting.gate?.cancel(id) == true else { return }
        queued.removeValue(forKey: id)
        inFlightEnded()
        if let route = waiting.context.route {
            leftQueue(waiting.context)
            let limits = route.limits.map { " (limits.queue_timeout: \(Self.seconds($0.queueTimeout)))" } ?? ""
            refuseQueued(waiting.context, route: route, hint: "The request waited in the route's queue for an upstream slot longer than it may\(limits).")
        }
        upstreamEnded()
    }

    /// `overloaded`, with `Retry-After` in whole seconds (at least 1).
    func refuseQueued(_ context: RequestContext, route: Route, retryAfter: Double = 1, hint: String) {
        let seconds = max(1, Int(retryAfter.rounded(.up)))
        if let trace = context.sampledTrace {
            let now = clock.now()
            trace.child("queue", id: traceIDs.next(), from: context.queuedAt ?? now, to: now, error: "overloaded")
        }
        context.reply.problem(.overloaded, route: route.name, extraHeaders: [("Retry-After", String(seconds))], hint: hint)
    }

    /// The request leaves its route's queue (to the upstream, or refused): its wait, when
    /// it had one, for the completion event and `serializerd_queue_wait_seconds`.
    func leftQueue(_ context: RequestContext) {
        let seconds = context.queuedAt.map { clock.now() - $0 }
        context.queueSeconds = seconds
        if let trace = context.sampledTrace, let queuedAt = context.queuedAt {
            trace.child("queue", id: traceIDs.next(), from: queuedAt, to: clock.now())
        }
        context.route?.throttle.waited(seconds ?? 0)
    }

    /// A pause the upstream asked for in its answer (DESIGN §11) holds the route's next
    /// requests, on every worker, until it ends.
    func notePause(_ reply: UpstreamResponse, route: Route) {
        guard PauseSignal.mayAsk(reply.headers),
              let pause = PauseSignal.pause(status: reply.status, headers: reply.headers, wallNow: clock.wall()) else { return }
        route.throttle.pause(until: clock.now() + pause.seconds)
    }

    /// Gives back the request's slot, if it holds one: the next waiter gets it.
    func leaveGate(_ context: RequestContext) {
        guard let gate = context.gateSlot else { return }
        context.gateSlot = nil
        gate.leave()
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))s" : "\(Int((value * 1000).rounded()))ms"
    }
}
