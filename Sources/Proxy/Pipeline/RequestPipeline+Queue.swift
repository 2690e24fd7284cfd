import EventLoop
import Resilience

/// Requests waiting in a route's queue (DESIGN §11), by their place's id.
struct QueuedRequest {
    let context: RequestContext
    let gate: UpstreamGate
    let timer: Timer?
}

extension RequestPipeline {
    /// Parks a request in its route's queue until its gate hands it a slot or
    /// `queue_timeout` passes; counted in flight meanwhile, so shutdown waits for it.
    func wait(_ context: RequestContext, id: UInt64, gate: UpstreamGate, route: Route, timeout: Double) {
        requestStarted()
        let timer = makeTimer? { [unowned self] in self.queueTimedOut(id) }
        timer?.schedule(after: timeout)
        queued[id] = QueuedRequest(context: context, gate: gate, timer: timer)
    }

    /// A slot was handed to a request of this worker: it goes on to the upstream.
    func gateOpened(_ id: UInt64) {
        guard let waiting = queued.removeValue(forKey: id) else { return }
        waiting.timer?.cancel()
        inFlightEnded()
        let context = waiting.context
        context.gateSlot = waiting.gate
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
        guard let waiting = queued[id], waiting.gate.cancel(id) else { return }
        queued.removeValue(forKey: id)
        inFlightEnded()
        if let route = waiting.context.route {
            let limits = route.limits.map { " (limits.queue_timeout: \(Self.seconds($0.queueTimeout)))" } ?? ""
            refuseQueued(waiting.context, route: route, hint: "The request waited in the route's queue for an upstream slot longer than it may\(limits).")
        }
        upstreamEnded()
    }

    func refuseQueued(_ context: RequestContext, route: Route, hint: String) {
        context.reply.problem(.overloaded, route: route.name, extraHeaders: [("Retry-After", "1")], hint: hint)
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
