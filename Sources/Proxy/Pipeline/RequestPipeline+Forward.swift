import Cache
import Contracts
import EventLoop
import HTTPCore
import Serializers
import Tapes
import Telemetry
import Tracing
import Upstream

extension RequestPipeline {
    /// A routed request through its route's stages (DESIGN §1).
    func forward(_ context: RequestContext, route: Route, target: RequestTarget) {
        context.routed(to: route, stages: networkOverrides.isActive ? route.stagesUnderRuntimeNetwork : route.stages, target: target)
        if let tracing = config.tracing { beginTrace(context, tracing) }
        proceed(context, route: route)
    }

    /// Runs the request's stages from `context.stage` until one answers, parks or refuses it.
    func proceed(_ context: RequestContext, route: Route) {
        let stages = context.stages
        while context.stage < stages.count {
            switch stages[context.stage].run(context, route: route, in: self) {
            case .passed: context.stage += 1
            case .answered, .parked: return
            case .refused(let failure): return context.reply.problem(failure, route: route.name)
            }
        }
    }

    /// A parked request: its stage runs again.
    func resume(_ context: RequestContext) {
        guard let route = context.route else { return }
        context.woken = true
        proceed(context, route: route)
    }

    /// The upstream request fields (DESIGN §4), made once per request.
    func upstreamFields(_ context: RequestContext, route: Route) -> HeaderFields {
        if let made = context.upstreamFields { return made }
        let request = context.request
        let made = HeaderPolicy.upstreamHeaders(client: request, route: route, contentType: context.serialized.contentType,
                                                peer: request.peerIsUnixSocket ? nil : request.peerAddress,
                                                requestID: context.requestID, via: via, tracing: context.trace != nil)
        context.upstreamFields = made
        return made
    }

    /// One upstream exchange, then `complete`. `unconditional`: for a revalidation, the
    /// same request without validators, sent when the upstream answers 304 for another
    /// representation than the stored one (RFC 9111 §4.3.4).
    func send(_ upstream: UpstreamRequest, unconditional: UpstreamRequest?, _ context: RequestContext) {
        guard let route = context.route else { return }
        let sent = clock.now(), sentWall = clock.wall()
        if let retries = route.retries, context.firstSentAt == nil {
            context.firstSentAt = sent
            retries.request(now: sent)
        }
        requestStarted()
        let trace = context.trace
        let done = { [unowned self, context] (result: Result<UpstreamResponse, UpstreamFailure>) in
            // No longer waiting on the upstream: counted before the reply can reach the client.
            self.inFlightEnded()
            if let trace { self.endAttempt(trace, result, route: route, attempt: context.attempts) }
            Self.observe(result, by: route.reachability, now: self.clock.wall())
            if case .success(let reply) = result { self.notePause(reply, route: route) }
            if let retry = route.retry, context.stream == nil,
               self.retryIfDue(result, retry: retry, upstream, unconditional: unconditional, context, route: route) {
                return self.upstreamEnded()
            }
            if let relay = context.stream {
                if context.breakerCounts {
                    let failed = switch result {
                    case .success(let reply): reply.status >= 500
                    case .failure(.timeout), .failure(.unavailable): true
                    case .failure: false
                    }
                    self.noteOutcome(failed: failed, context, route: route)
                }
                self.leaveGate(context)
                relay.upstreamEnded(result)
                return self.upstreamEnded()
            }
            let seconds = clock.now() - sent
            context.upstreamSeconds = (context.upstreamSeconds ?? 0) + seconds
            if let heard = context.upstreamAnswered, case .success(let reply) = result { heard(upstream, reply, sentWall, seconds, .whole) }
            if let unconditional, case .success(let reply) = result, reply.status == 304, let stale = context.cached?.stale,
               !stale.isValidated(byETag: reply.headers.first("ETag"),
                                  lastModified: reply.headers.first("Last-Modified")) {
                // Not this entry's 304: ask again for the whole answer. The entry may no longer
                // stand in for a failure either: the upstream has moved on from it.
                context.cached?.revalidating = false
                context.cached?.stale = nil
                context.upstreamSent?.lines = unconditional.headers.bytes
                self.send(unconditional, unconditional: nil, context)
            } else {
                self.leaveGate(context)
                self.complete(result, context)
            }
            self.upstreamEnded()
        }
        // Traced: this attempt's copy carries its traceparent; untraced requests copy nothing.
        guard context.streamsVia != nil else {
            if let trace { return session.start(traced(upstream, trace), completion: done) }
            return session.start(upstream, completion: done)
        }
        context.upstreamSentAt = sent
        if context.upstreamAnswered != nil { context.streamRecording = StreamRecording(request: upstream, startedWall: sentWall) }
        if let trace {
            context.upstreamTask = session.start(traced(upstream, trace), stream: context, completion: done)
        } else {
            context.upstreamTask = session.start(upstream, stream: context, completion: done)
        }
    }

    /// The answer to the client from the upstream's (or a tape's, a mock's) reply.
    /// `serialized`: what the route already made of this reply; `made` hears what it makes.
    func complete(_ result: Result<UpstreamResponse, UpstreamFailure>, _ context: RequestContext,
                  serialized: (SerializationResult, Int?)? = nil, made: ((SerializationResult, Int?) -> Void)? = nil) {
        guard let route = context.route else { return }
        let cached = context.cached
        // Whatever the outcome, the requests waiting for this miss read the cache next.
        defer { if let cached, cached.leads { cache.misses.finish(cached.key) } }
        if let cached { context.cache = .init(result: cached.result, status: cached.status(fwdStatus: try? result.get().status)) }
        let reply: UpstreamResponse
        switch result {
        case .failure(let failure): return failed(failure, context, route: route)
        case .success(let success): reply = success
        }
        if let cached, answeredByCache(cached, reply: reply, context) {
            noteOutcome(failed: reply.status >= 500, context, route: route)
            return
        }
        var (answer, damaged) = (reply, false)
        if let plan = context.network, !plan.chaos.isEmpty { (answer, damaged) = damage(reply, chaos: plan.chaos, context) }
        let started = clock.now()
        var outcome: SerializationResult
        // The contract's schema is checked in the normalizer where it can be (a JSON route).
        let checking = (serialized == nil || damaged) && route.contract?.source != nil
            ? route.contract?.outputContract(path: context.remainder, method: context.request.method, status: answer.status) : nil
        (outcome, context.unsafeNumbers) = (damaged ? nil : serialized) ?? route.serialize(answer, checking: checking)
        if serialized == nil, !damaged { made?(outcome, context.unsafeNumbers) }
        // The contract's parts are read in place: a copy of it costs every answer.
        if let trace = context.sampledTrace {
            let serializer = outcome.serializer
            trace.child("serialize", id: traceIDs.next(), from: started, to: clock.now(),
                        error: outcome.succeeded ? nil : outcome.error?.typeSuffix) { $0.add("serializerd.serializer", serializer) }
        }
        if route.contract?.source != nil, outcome.succeeded, let value = outcome.value, let contract = route.contract {
            let checked = clock.now()
            outcome = check(contract, outcome, value: value, reply: answer, context, route: route)
            if let trace = context.sampledTrace {
                trace.child("contract", id: traceIDs.next(), from: checked, to: clock.now(),
                            attributes: [SpanAttribute("serializerd.contract.violations", context.contractViolations ?? 0)],
                            error: outcome.succeeded ? nil : "the answer breaks the route's contract")
            }
        }
        if let shapes = route.contract?.shapes { learn(shapes, outcome, status: answer.status, context, after: route.contract?.driftAfter ?? 1) }
        if context.breakerCounts { noteOutcome(answer: answer, outcome, context, route: route) }
        context.serializeSeconds = clock.now() - started
        if outcome.succeeded, let value = outcome.value {
            deliver(value, serializer: outcome.serializer, reply: answer, context, route: route, damaged: damaged)
        } else {
            refuse(outcome, reply: answer, context, route: route, damaged: damaged)
        }
    }

    /// An answer's outcome for the route's breaker (DESIGN §11): a 5xx, or an answer the
    /// serializer or an enforced contract refused (an HTML page with status 200), failed;
    /// a 4xx is neither (but a probe's 4xx closes it: the upstream answers).
    private func noteOutcome(answer: UpstreamResponse, _ outcome: SerializationResult, _ context: RequestContext, route: Route) {
        let refused: Bool
        switch outcome.error {
        case .unacceptableContentType?, .serializationFailed?, .contractViolation?: refused = true
        default: refused = false
        }
        let failed = answer.status >= 500 || refused
        if !failed, (400..<500).contains(answer.status), !context.breakerProbe { return }
        noteOutcome(failed: failed, context, route: route)
    }

    func noteOutcome(failed: Bool, _ context: RequestContext, route: Route) {
        guard context.breakerCounts, let breaker = route.breaker else { return }
        breaker.record(failed: failed, probe: context.breakerProbe, now: clock.now())
        context.breakerCounts = false
        context.breakerProbe = false
    }

    /// The route's contract on a serialized answer (DESIGN §10): a violation is counted and
    /// kept as evidence; under `enforce` it fails the answer, which then goes the way of
    /// any serializer failure (a stored answer, passthrough, the problem document).
    private func check(_ contract: RouteContract, _ outcome: SerializationResult, value: NormalizedJSON, reply: UpstreamResponse,
                       _ context: RequestContext, route: Route) -> SerializationResult {
        let violations = contract.check(value, maxDepth: config.limits.maxJSONDepth, path: context.remainder, method: context.request.method,
                                        status: reply.status)
        guard !violations.isEmpty else { return outcome }
        context.contractViolations = violations.count
        let error = contract.failure(violations)
        if contract.mode == .enforce { return SerializationResult(value: value, error: error, serializer: outcome.serializer) }
        keepEvidence(reply, error: error, evidence: UpstreamEvidence(reply, shownURL: config.capture.url(context.url), parsed: value),
                     route: route, context, hint: nil)
        return outcome
    }

    /// Drift learning (DESIGN §10): the normalized answer's shape, or that the serializer
    /// refused what it was sent (an HTML page where JSON always came).
    private func learn(_ shapes: RouteShapes, _ outcome: SerializationResult, status: Int, _ context: RequestContext, after: Int) {
        let wall = clock.wall
        if let value = outcome.value {
            value.bytes.withUnsafeBufferPointer {
                _ = shapes.observe(method: context.request.method, path: context.remainder, status: status, body: $0, after: after, now: wall())
            }
            return
        }
        switch outcome.error {
        case .unacceptableContentType?, .serializationFailed?:
            shapes.observe(method: context.request.method, path: context.remainder, status: status, body: nil,
                           refusal: outcome.error?.typeSuffix, after: after, now: wall())
        default:
            break
        }
    }

    /// No answer from the upstream: a stored one may stand in, else the problem says why.
    private func failed(_ failure: UpstreamFailure, _ context: RequestContext, route: Route) {
        switch failure {
        case .timeout, .unavailable: noteOutcome(failed: true, context, route: route)
        default: break
        }
        let reply = context.reply
        // Problem documents show the URL with capture.redact_query applied (a route's
        // upstream may carry a key); only failures pay for it.
        let shownURL = config.capture.url(context.url)
        switch failure {
        case .timeout, .unavailable:
            if let cached = context.cached, serveStale(cached, invalid: false, fwdStatus: nil, context) { return }
        default:
            break
        }
        switch failure {
        case .timeout: reply.problem(.upstreamTimeout(url: shownURL, seconds: route.timeout), route: route.name)
        case .bodyTooLarge(let limit): reply.problem(.upstreamBodyTooLarge(limit: limit, url: shownURL), route: route.name)
        case .aborted: reply.problem(.unavailable, route: route.name)
        case .overloaded: reply.problem(.overloaded, route: route.name, extraHeaders: [("Retry-After", "1")])
        case .unavailable(let code, let message):
            // While the probe says down, say when to try again: the probe's interval.
            let retry = route.reachability.failsFast ? [("Retry-After", String(Int((route.health?.interval ?? 1).rounded(.up))))] : []
            reply.problem(.upstreamUnavailable(curlCode: code, message: message, url: shownURL), route: route.name, extraHeaders: retry)
        }
    }

    /// The cache's answer in place of the upstream's: a 304 to its revalidation, or a
    /// stored entry instead of a 5xx.
    private func answeredByCache(_ cached: CacheExchange, reply: UpstreamResponse, _ context: RequestContext) -> Bool {
        if cached.revalidating, reply.status == 304, let stale = cached.stale {
            refresh(cached, stale: stale, reply: reply, context)
            return true
        }
        return reply.status >= 500 && serveStale(cached, invalid: false, fwdStatus: reply.status, context, reply: reply)
    }

    /// A serialized answer: stored first on a caching route (never a damaged one: the next
    /// request would get it without chaos asked).
    private func deliver(_ value: NormalizedJSON, serializer: String, reply: UpstreamResponse, _ context: RequestContext,
                         route: Route, damaged: Bool) {
        if let cached = context.cached, !damaged {
            let bytes = route.output.envelope ? ResponseWriter.envelope(reply, data: value.bytes, cookies: context.passesCookies) : value.bytes
            return sendCaching(bytes, serializer: serializer, reply: reply, cached: cached, route: route, context)
        }
        context.reply.success(value, serializer: serializer, reply: reply, envelope: route.output.envelope)
    }

    /// The serializer refused the answer: its evidence kept, then a stored answer, the
    /// upstream's own (`on_failure: passthrough`) or the problem document.
    private func refuse(_ outcome: SerializationResult, reply: UpstreamResponse, _ context: RequestContext, route: Route,
                        damaged: Bool) {
        let shownURL = config.capture.url(context.url)
        let error = outcome.error ?? .serializationFailed(serializer: outcome.serializer, detail: "no value", underlying: nil)
        let evidence = UpstreamEvidence(reply, shownURL: shownURL, parsed: outcome.value)
        let failure = ProxyFailure.response(error, upstream: evidence)
        let hint = route.response.hint(for: error)
        keepEvidence(reply, error: error, evidence: evidence, route: route, context, hint: hint)
        // The last good answer stands in (its failure kept above, and counted as stale).
        if let cached = context.cached, !damaged,
           serveStale(cached, invalid: true, fwdStatus: reply.status, context, reply: reply,
                      error: "served the stored answer: " + (failure.detail ?? failure.title)) {
            return
        }
        if route.output.onFailure == .passthrough {
            return context.reply.passthrough(reply, failure: failure, serializer: outcome.serializer)
        }
        // The upstream's own 429/503 goes out as such: its Retry-After with it.
        let retry = failure.clientStatus == reply.status ? reply.headers.pairs(where: HeaderPolicy.retryAfter.contains).prefix(1) : []
        context.reply.problem(failure, route: route.name, extraHeaders: Array(retry), reply: reply, serializer: outcome.serializer,
                              hint: hint)
    }
}

extension RequestPipeline {
    /// CURLE_COULDNT_CONNECT: what a request failed at once by the probe reports.
    static let couldNotConnect = 7

    /// What a request saw of its upstream, for reachability: any answer; or a failure to
    /// resolve or connect (CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT), or a timeout.
    static func observe(_ result: Result<UpstreamResponse, UpstreamFailure>, by reachability: Reachability, now: Double) {
        switch result {
        case .success: reachability.observe(answered: true, detail: "", now: now)
        case .failure(.timeout): reachability.observe(answered: false, detail: "a request timed out", now: now)
        case .failure(.unavailable(let code, let message)) where code == 6 || code == 7:
            reachability.observe(answered: false, detail: message, now: now)
        default: break
        }
    }

    /// An upstream exchange onto the route's tape, redacted by `capture` first (DESIGN §2).
    /// Encoded once, here, from the buffers the exchange already has.
    func record(_ request: UpstreamRequest, reply: UpstreamResponse, into tape: Tape, started: Double, seconds: Double,
                timing: RequestContext.RecordedTiming = .whole) {
        let capture = config.capture
        // Made only when the tape keeps entries in memory (or for a stream or WebSocket).
        func entry() -> TapeEntry {
            TapeEntry(request: TapeRequest(method: request.method, url: request.url, headers: request.headers, body: request.body),
                      status: reply.status, responseHeaders: reply.headers, responseBody: reply.body,
                      startedAt: started, duration: seconds, chunks: timing.chunks, messages: timing.messages)
        }
        // A stream's redaction moves its chunks' offsets, a WebSocket's is per message: such
        // an entry is encoded from its redacted self.
        if timing.chunks != nil || timing.messages != nil {
            let redacted = entry().redacted(by: capture)
            _ = tape.record(encoded: HARCodec.encode(redacted)) { redacted }
            return
        }
        let encoded = HARCodec.encode(method: request.method, url: request.url, requestHeaders: { request.headers.forEach($0) },
                                      requestBody: request.body, status: reply.status, responseHeaders: { reply.headers.forEach($0) },
                                      responseBody: reply.body, startedAt: started, duration: seconds, capture: capture,
                                      httpVersion: reply.httpVersion)
        _ = tape.record(encoded: encoded) { entry().redacted(by: capture) }
    }
}

extension UpstreamResponse {
    /// An answer serializerd makes up in the upstream's place (a mock's).
    init(status: Int, fields: HeaderFields, body: [UInt8], url: String) {
        self.init(status: status, headers: fields, contentType: fields.first("Content-Type"), body: body, url: url)
    }
}

extension RequestPipeline {
    /// Keeps what the upstream sent and how to redo the serialization offline, redacted
    /// by `capture` first: the URL, the headers, JSON and form bodies, and the problem
    /// document rendered from them. Runs on the failure path only: the success path
    /// never reaches the store's lock.
    func keepEvidence(_ reply: UpstreamResponse, error: SerializationError, evidence: UpstreamEvidence, route: Route,
                      _ context: RequestContext, hint: String?) {
        guard config.keepFailures else { return }
        let capture = config.capture
        let body = capture.body(reply.body, contentType: reply.contentType) ?? reply.body
        var kept = evidence
        kept.body = body
        if let parsed = evidence.parsed, let redacted = capture.body(parsed.bytes, contentType: "application/json") {
            kept.parsed = (try? JSONValue.parse(redacted)).map { NormalizedJSON($0) }
        }
        let failure = ProxyFailure.response(error, upstream: kept)
        shared.failures.keep(FailureEvidence(
            requestID: context.requestID, startedAt: context.startedWall, route: route.name, method: context.request.method,
            path: context.path, upstreamURL: capture.url(reply.url), status: reply.status, headers: capture.headers(reply.headers.pairs),
            contentType: reply.contentType, body: body,
            problem: ProblemDocument.render(failure, route: route.name, requestID: context.requestID, hint: hint),
            problemType: ProblemDocument.typePrefix + failure.typeSuffix,
            transcodeArguments: ReproduceCommand.arguments(reply, route: route, file: ReproduceCommand.bodyFileName(context.requestID))))
    }
}
