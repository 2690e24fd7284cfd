import Cache
import EventLoop
import HTTPCore
import Serializers
import Tapes
import Telemetry
import Upstream

extension RequestPipeline {
    /// `woken`: the request waited for another's cache miss and is read again.
    func forward(_ request: any ClientExchange, target: RequestTarget, route: Route, writer: ResponseWriter, woken: Bool = false) {
        writer.passesCookies = route.cookies == nil
        if !woken, route.hasNetwork || networkOverrides.isActive {
            if let failure = planNetwork(request, route: route, writer: writer) { return writer.problem(failure, route: route.name) }
            if answerFault(route: route, writer: writer) { return }
        }
        let remainder = route.remainder(of: target.path)
        let serialized: SerializedRequest
        do throws(RequestSerializationError) {
            serialized = try route.requestSerializer.serialize(RequestInput(
                method: request.method, query: target.query, contentType: request.header("Content-Type"), body: request.body,
                maxDepth: config.limits.maxJSONDepth, maxOutput: config.limits.maxRequestSerializerOutput))
        } catch {
            writer.problem(.badRequest(error.description), route: route.name)
            return
        }
        let url: String
        switch route.upstream.join(remainder: remainder, query: serialized.query) {
        case .failure(let escape):
            writer.problem(.invalidPath(escape.description), route: route.name)
            return
        case .success(let joined):
            url = joined
        }
        writer.upstreamURL = url
        writer.upstreamRequest = .init(lines: [], body: serialized.body)
        if !route.mocks.isEmpty {
            let asked = MockRequest(method: request.method, path: String(remainder), query: target.query) { request.header($0) }
            switch Mocks.answer(route.mocks, asked, maxBytes: config.limits.maxResponseBody) {
            case .answer(let answer, _):
                writer.source = .mock
                let reply = UpstreamResponse(status: answer.status, fields: answer.headers, body: answer.body, url: url)
                return complete(.success(reply), url: url, route: route, writer: writer)
            case .escapes(let why):
                return writer.problem(.invalidPath(why), route: route.name)
            case .none:
                break
            }
        }
        let requestID = writer.requestID
        func upstreamHeaders() -> HeaderLines {
            HeaderPolicy.upstreamHeaders(client: request, route: route, contentType: serialized.contentType,
                                         peer: request.peerIsUnixSocket ? nil : request.peerAddress, requestID: requestID, via: via)
        }
        var headers: HeaderLines?
        var recording: Tape?
        if let tape = route.tape {
            // The upstream headers only when matching or recording reads them: a replay
            // that needs none costs no more than its answer.
            if tape.records || tape.tape.matchReadsHeaders { headers = upstreamHeaders() }
            writer.upstreamRequest?.lines = headers?.bytes ?? []
            if tape.replays {
                let asked = TapeRequest(method: request.method, url: url, headers: headers?.fields ?? [], body: serialized.body)
                if let replayed = tape.tape.replay(asked) {
                    writer.source = .tape
                    let reply = UpstreamResponse(status: replayed.status, headers: UpstreamHeaders(lines: replayed.headerLines),
                                              contentType: replayed.contentType, body: replayed.body, url: url)
                    // The route made the same of these bytes before: its output, kept.
                    let owner = ObjectIdentifier(route)
                    if let served = tape.tape.served(replayed.entry, owner: owner) {
                        return complete(.success(reply), url: url, route: route, writer: writer, serialized: (served.result, served.unsafeNumbers))
                    }
                    return complete(.success(reply), url: url, route: route, writer: writer) { result, unsafe in
                        tape.tape.keep(Tape.Served(owner: owner, result: result, unsafeNumbers: unsafe), for: replayed.entry)
                    }
                }
                if tape.mode == .replay { return writer.problem(.replayMiss(tape.tape.missDetail(asked)), route: route.name) }
            }
            if tape.records { recording = tape.tape }
        }
        var cached: CacheExchange?
        if let rule = route.cache {
            switch consultCache(rule, request: request, target: target, url: url, route: route, writer: writer, woken: woken) {
            case .answered: return
            case .forward(let exchange): cached = exchange
            }
        }
        let plainHeaders = headers ?? upstreamHeaders()
        var sentHeaders = plainHeaders
        if let cached, cached.revalidating, let stale = cached.stale {
            // RFC 9111 §4.3.1: the upstream's own validators.
            if let etag = stale.upstreamETag { sentHeaders.append("If-None-Match", etag) }
            if let modified = stale.lastModified { sentHeaders.append("If-Modified-Since", modified) }
        }
        writer.upstreamRequest?.lines = sentHeaders.bytes
        let upstream = UpstreamRequest(url: url, method: request.method, headers: sentHeaders, body: serialized.body,
                                       timeout: route.timeout, connectTimeout: route.connectTimeout,
                                       followRedirects: route.followRedirects, maxResponseBytes: config.limits.maxResponseBody, tls: route.tls,
                                       httpVersion: route.httpVersion, cookies: route.cookies,
                                       tag: UpstreamRequest.Tag(requestID: writer.requestID, route: route.name, method: request.method,
                                                                path: writer.path))
        // The health probe says the upstream is down: fail now, not after a connect timeout
        // (a stale cache entry may still answer).
        if route.reachability.failsFast {
            let since = route.reachability.since.map { " since " + UTCTimestamp.format(unixSeconds: $0, fraction: .milliseconds) } ?? ""
            return complete(.failure(.unavailable(code: Self.couldNotConnect,
                                                  message: "the upstream is unreachable by its health probe\(since); failing at once")),
                            url: url, route: route, writer: writer, cached: cached)
        }
        var unconditional: UpstreamRequest?
        if cached?.revalidating == true {
            unconditional = upstream
            unconditional?.headers = plainHeaders
        }
        send(upstream, unconditional: unconditional, url: url, route: route, writer: writer, cached: cached, recording: recording)
    }

    /// One upstream exchange, then `complete`. `unconditional`: for a revalidation, the
    /// same request without validators, sent when the upstream answers 304 for another
    /// representation than the stored one (RFC 9111 §4.3.4).
    func send(_ upstream: UpstreamRequest, unconditional: UpstreamRequest?, url: String, route: Route, writer: ResponseWriter,
              cached: CacheExchange?, recording: Tape?) {
        let sent = clock.now(), sentWall = clock.wall()
        requestStarted()
        session.start(upstream) { [unowned self, writer] result in
            writer.upstreamSeconds = (writer.upstreamSeconds ?? 0) + (clock.now() - sent)
            // No longer waiting on the upstream: counted before the reply can reach the client.
            self.inFlightEnded()
            Self.observe(result, by: route.reachability, now: self.clock.wall())
            if let recording, case .success(let reply) = result {
                self.record(upstream, reply: reply, into: recording, started: sentWall, seconds: clock.now() - sent)
            }
            if var again = cached, let unconditional, case .success(let reply) = result, reply.status == 304, let stale = again.stale,
               !stale.isValidated(byETag: reply.headers.first(HeaderPolicy.etag),
                                  lastModified: reply.headers.first(HeaderPolicy.lastModified)) {
                // Not this entry's 304: ask again for the whole answer. The entry may no longer
                // stand in for a failure either: the upstream has moved on from it.
                again.revalidating = false
                again.stale = nil
                writer.upstreamRequest?.lines = unconditional.headers.bytes
                self.send(unconditional, unconditional: nil, url: url, route: route, writer: writer, cached: again, recording: recording)
            } else {
                self.complete(result, url: url, route: route, writer: writer, cached: cached)
            }
            self.upstreamEnded()
        }
    }

    /// The answer to the client from the upstream's (or a tape's, a mock's) reply.
    /// `serialized`: what the route already made of this reply; `made` hears what it makes.
    func complete(_ result: Result<UpstreamResponse, UpstreamFailure>, url: String, route: Route, writer: ResponseWriter,
                  serialized: (SerializationResult, Int?)? = nil, made: ((SerializationResult, Int?) -> Void)? = nil,
                  cached: CacheExchange? = nil) {
        // Whatever the outcome, the requests waiting for this miss read the cache next.
        defer { if let cached, cached.leads { cache.misses.finish(cached.key) } }
        if let cached { writer.cache = .init(result: cached.result, status: cached.status(fwdStatus: try? result.get().status)) }
        var reply: UpstreamResponse
        // Problem documents show the URL with capture.redact_query applied (a route's
        // upstream may carry a key); only failures pay for it.
        var shownURL: String { config.capture.url(url) }
        switch result {
        case .failure(.timeout), .failure(.unavailable):
            if let cached, serveStale(cached, invalid: false, fwdStatus: nil, writer: writer) { return }
        default:
            break
        }
        switch result {
        case .failure(.timeout): return writer.problem(.upstreamTimeout(url: shownURL, seconds: route.timeout), route: route.name)
        case .failure(.bodyTooLarge(let limit)): return writer.problem(.upstreamBodyTooLarge(limit: limit, url: shownURL), route: route.name)
        case .failure(.aborted): return writer.problem(.unavailable, route: route.name)
        case .failure(.overloaded): return writer.problem(.overloaded, route: route.name, extraHeaders: [("Retry-After", "1")])
        case .failure(.unavailable(let code, let message)):
            // While the probe says down, say when to try again: the probe's interval.
            let retry = route.reachability.failsFast ? [("Retry-After", String(Int((route.health?.interval ?? 1).rounded(.up))))] : []
            return writer.problem(.upstreamUnavailable(curlCode: code, message: message, url: shownURL), route: route.name, extraHeaders: retry)
        case .success(let success): reply = success
        }
        if let cached {
            if cached.revalidating, reply.status == 304, let stale = cached.stale {
                return refresh(cached, stale: stale, reply: reply, writer: writer)
            }
            if reply.status >= 500, serveStale(cached, invalid: false, fwdStatus: reply.status, writer: writer, reply: reply) { return }
        }
        var damaged = false
        if let plan = writer.network, !plan.chaos.isEmpty { (reply, damaged) = damage(reply, chaos: plan.chaos, writer: writer) }
        let started = clock.now()
        let outcome: SerializationResult
        (outcome, writer.unsafeNumbers) = (damaged ? nil : serialized) ?? route.serialize(reply)
        writer.serializeSeconds = clock.now() - started
        if serialized == nil, !damaged { made?(outcome, writer.unsafeNumbers) }
        if outcome.succeeded, let value = outcome.value {
            // A damaged answer is never stored: the next request would get it without chaos asked.
            if let cached, !damaged {
                let bytes = route.output.envelope ? ResponseWriter.envelope(reply, data: value.bytes, cookies: writer.passesCookies) : value.bytes
                return sendCaching(bytes, serializer: outcome.serializer, reply: reply, cached: cached, route: route, writer: writer)
            }
            writer.success(value, serializer: outcome.serializer, reply: reply, envelope: route.output.envelope)
        } else {
            let error = outcome.error ?? .serializationFailed(serializer: outcome.serializer, detail: "no value", underlying: nil)
            let evidence = UpstreamEvidence(reply, shownURL: shownURL, parsed: outcome.value)
            let failure = ProxyFailure.response(error, upstream: evidence)
            let hint = route.response.hint(for: error)
            keepEvidence(reply, error: error, evidence: evidence, route: route, writer: writer, hint: hint)
            // The last good answer stands in (its failure kept above, and counted as stale).
            if let cached, !damaged, serveStale(cached, invalid: true, fwdStatus: reply.status, writer: writer, reply: reply,
                                      error: "served the stored answer: " + (failure.detail ?? failure.title)) {
                return
            }
            if route.output.onFailure == .passthrough {
                writer.passthrough(reply, failure: failure, serializer: outcome.serializer)
            } else {
                // The upstream's own 429/503 goes out as such: its Retry-After with it.
                let retry = failure.clientStatus == reply.status ? reply.headers.fields(where: HeaderPolicy.retryAfter.contains).prefix(1) : []
                writer.problem(failure, route: route.name, extraHeaders: Array(retry), reply: reply, serializer: outcome.serializer,
                               hint: hint)
            }
        }
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
    func record(_ request: UpstreamRequest, reply: UpstreamResponse, into tape: Tape, started: Double, seconds: Double) {
        let capture = config.capture
        let encoded = HARCodec.encode(method: request.method, url: request.url, requestHeaders: { request.headers.forEachField($0) },
                                      requestBody: request.body, status: reply.status, responseHeaders: { reply.headers.forEachField($0) },
                                      responseBody: reply.body, startedAt: started, duration: seconds, capture: capture,
                                      httpVersion: reply.httpVersion)
        tape.record(encoded: encoded) {
            TapeEntry(request: TapeRequest(method: request.method, url: request.url, headers: request.headers.fields, body: request.body),
                      status: reply.status, responseHeaders: reply.headers.all, responseBody: reply.body,
                      startedAt: started, duration: seconds).redacted(by: capture)
        }
    }
}

extension UpstreamResponse {
    /// An answer serializerd makes up in the upstream's place (a mock's).
    init(status: Int, fields: [(String, String)], body: [UInt8], url: String) {
        self.init(status: status, headers: UpstreamHeaders(fields: fields), contentType: TapeRequest.field("Content-Type", in: fields),
                  body: body, url: url)
    }
}

extension RequestPipeline {
    /// Keeps what the upstream sent and how to redo the serialization offline, redacted
    /// by `capture` first: the URL, the headers, JSON and form bodies, and the problem
    /// document rendered from them. Runs on the failure path only: the success path
    /// never reaches the store's lock.
    func keepEvidence(_ reply: UpstreamResponse, error: SerializationError, evidence: UpstreamEvidence, route: Route,
                      writer: ResponseWriter, hint: String?) {
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
            requestID: writer.requestID, startedAt: writer.startedWall, route: route.name, method: writer.request.method,
            path: writer.path, upstreamURL: capture.url(reply.url), status: reply.status, headers: capture.headers(reply.headers.all),
            contentType: reply.contentType, body: body,
            problem: ProblemDocument.render(failure, route: route.name, requestID: writer.requestID, hint: hint),
            problemType: ProblemDocument.typePrefix + failure.typeSuffix,
            transcodeArguments: ReproduceCommand.arguments(reply, route: route, file: ReproduceCommand.bodyFileName(writer.requestID))))
    }
}
