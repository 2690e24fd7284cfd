import Resilience

/// The route's queue before the upstream (DESIGN §11): first its throttle, a pause the
/// upstream asked for (any route) and `limits.rate`'s bucket, for which the request is
/// parked until its time comes (or is `overloaded` at once when that is past
/// `queue_timeout`); then a slot of its gate (`limits.concurrency`), for which it waits in
/// the route's FIFO queue (woken on this worker when a slot is handed to it) or is
/// `overloaded` when the queue is full.
struct QueueStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        guard context.gateSlot == nil else { return .passed }
        let timeout = route.limits?.queueTimeout ?? RouteLimits.defaultQueueTimeout
        if !context.throttled {
            if let breaker = route.breaker, !admitted(by: breaker, context, route: route, in: pipeline) { return .answered }
            context.throttled = true
            if !route.throttle.isOpen(at: context.started) {
                let now = pipeline.clock.now()
                let (grant, holder) = route.throttle.admit(now: now, within: timeout)
                if let holder { route.throttle.held(by: holder) }
                switch grant {
                case .refused(let wait):
                    pipeline.refuseQueued(context, route: route, retryAfter: wait, hint: holder == .bucket
                        ? "The route's rate (limits.rate: \(route.limits?.rate?.description ?? "-")) has no request free within its queue_timeout."
                        : "The upstream asked for a pause (Retry-After or a RateLimit field) longer than the route's queue_timeout.")
                    return .answered
                case .after(let wait) where wait > 0:
                    context.queuedAt = now
                    return pipeline.delay(context, seconds: wait, route: route) ? .parked : .answered
                case .after:
                    break
                }
            }
        }
        guard let gate = route.gate, let limits = route.limits, let concurrency = limits.concurrency else {
            if context.queuedAt != nil || route.limits != nil { pipeline.leftQueue(context) }
            return .passed
        }
        let mailbox = pipeline.mailbox
        switch gate.enter(wake: { id in mailbox.post(.gateOpened(id)) }) {
        case .go:
            context.gateSlot = gate
            pipeline.leftQueue(context)
            return .passed
        case .queued(let id):
            let now = pipeline.clock.now()
            if context.queuedAt == nil { context.queuedAt = now }
            let waited = now - (context.queuedAt ?? now)
            pipeline.wait(context, id: id, gate: gate, route: route, timeout: max(0, limits.queueTimeout - waited))
            return .parked
        case .full:
            pipeline.refuseQueued(context, route: route, hint: "The route's queue is full: \(limits.queue) requests wait for one of its \(concurrency) upstream slots (limits.queue).")
            return .answered
        }
    }

    /// The route's breaker lets the request through (as the probe when half-open), or it
    /// is answered now: from the cache when the route's stale window allows, else
    /// `circuit-open` with the seconds until the probe.
    private func admitted(by breaker: RouteBreaker, _ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> Bool {
        switch breaker.admit(now: context.started) {
        case .pass:
            context.breakerCounts = true
        case .probe:
            context.breakerCounts = true
            context.breakerProbe = true
        case .refuse(let retryAfter):
            if let cached = context.cached, pipeline.serveStale(cached, invalid: false, fwdStatus: nil, context) { return false }
            context.reply.problem(.circuitOpen(retryAfter: retryAfter, failures: breaker.failures, window: breaker.window), route: route.name,
                                  extraHeaders: [("Retry-After", String(max(1, Int(retryAfter.rounded(.up)))))])
            return false
        }
        return true
    }
}
