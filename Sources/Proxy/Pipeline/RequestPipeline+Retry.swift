import HTTPCore
import Resilience
import Tracing
import Upstream

extension RequestPipeline {
    /// `retry` (DESIGN §11): when this attempt's outcome is one the route retries on, the
    /// request is idempotent, attempts remain and the route's budget has room, the request
    /// goes again after a full-jitter backoff (or the upstream's `Retry-After`, when it asked
    /// for one no longer than `max_backoff`); true then. The wait counts as in flight.
    func retryIfDue(_ result: Result<UpstreamResponse, UpstreamFailure>, retry: RouteRetry, _ upstream: UpstreamRequest,
                    unconditional: UpstreamRequest?, _ context: RequestContext, route: Route) -> Bool {
        guard context.attempts < retry.attempts, upstream.isIdempotent, let reason = retry.reason(for: result), let makeTimer,
              !shuttingDown else { return false }
        var retryAfter: Double?
        if case .success(let reply) = result, reply.status == 429 || reply.status == 503, let value = reply.headers.first("Retry-After") {
            retryAfter = PauseSignal.retryAfter(value, wallNow: clock.wall())
            if let asked = retryAfter, asked > retry.maxBackoff { return false }
        }
        let now = clock.now()
        guard route.retries?.spend(now: now, reason: reason.description) == true else { return false }
        var wait = Backoff.delay(retry: context.attempts, base: retry.backoff, cap: retry.maxBackoff, random: Double.random(in: 0..<1),
                                 retryAfter: retryAfter)
        // A retry is one more upstream request: the route's rate and pauses hold it as they
        // hold a first attempt, and one its queue_timeout would refuse is not made.
        if !route.throttle.isOpen(at: now) {
            let limit = max(wait, route.limits?.queueTimeout ?? RouteLimits.defaultQueueTimeout)
            let (grant, holder) = route.throttle.admit(now: now, within: limit, notBefore: now + wait)
            if let holder { route.throttle.held(by: holder) }
            guard case .after(let held) = grant else { return false }
            wait = held
        }
        context.attempts += 1
        context.sampledTrace?.event("retry", at: now, [SpanAttribute("serializerd.retry.reason", reason.description),
                                                 SpanAttribute("serializerd.retry.attempt", context.attempts),
                                                 SpanAttribute("serializerd.retry.backoff_ms", Int((wait * 1000).rounded()))])
        requestStarted()
        let timer = makeTimer { [unowned self, context] in
            self.inFlightEnded()
            context.retryTimer = nil
            if self.shuttingDown {
                // No new attempt while the worker drains: this one's outcome is the answer.
                self.leaveGate(context)
                self.complete(result, context)
                return self.upstreamEnded()
            }
            let resent = self.clock.now()
            context.retrySeconds = resent - (context.firstSentAt ?? resent)
            context.upstreamSeconds = nil
            self.send(upstream, unconditional: unconditional, context)
        }
        context.retryTimer = timer
        timer.schedule(after: wait)
        return true
    }
}
