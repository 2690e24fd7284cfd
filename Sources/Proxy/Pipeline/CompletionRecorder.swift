import HTTPCore
import Telemetry
import Tracing
import Upstream

/// Makes a request's one completion event (and what the full HAR shows of the exchange)
/// from its context, and hands it to the worker's telemetry.
struct CompletionRecorder {
    let telemetry: WorkerTelemetry

    /// What the completion event says besides the status.
    struct Outcome {
        var label: String
        var serializer: String? = nil
        var reply: UpstreamResponse? = nil
        var error: String? = nil
        /// The upstream body's size, kept when the body itself has been let go.
        var upstreamBytes: Int? = nil

        /// The same outcome without the upstream body (its size kept): what a reply still
        /// being sent to a slow client holds on to, so the body's memory is free at once.
        var withoutBody: Outcome {
            var light = self
            light.upstreamBytes = reply?.body.count
            light.reply?.body = []
            return light
        }

        static let ok = Outcome(label: "ok")
    }

    /// nginx's code for "the client closed the connection first": no status was sent.
    static let clientGoneStatus = 499

    /// What the full HAR shows of this exchange: references to buffers it already holds
    /// (the request head as received among them).
    func captured(_ c: RequestContext, headers: HeaderFields, body: [UInt8], reply: UpstreamResponse?) -> CapturedExchange {
        let upstream = reply.map { reply in
            CapturedExchange.Upstream(method: c.request.method, url: reply.url,
                                      requestLines: c.upstreamSent?.lines ?? [], requestBody: c.upstreamSent?.body ?? [],
                                      status: reply.status, responseLines: reply.headers.bytes, responseBody: reply.body)
        }
        return CapturedExchange(target: c.request.target, head: c.request.headBytes, requestBody: c.request.body,
                                responseHeaders: headers, responseBody: body, upstream: upstream)
    }

    /// The request's one completion event (also for event streams, when they end).
    func record(_ c: RequestContext, status: Int, bytesOut: Int, outcome: Outcome, duration: Double, responseContentType: String?,
                exchange: CapturedExchange? = nil) {
        let reply = outcome.reply
        // A probe that ended without an outcome for the breaker (a cache answered, the
        // client left): the next request probes.
        if c.breakerProbe {
            c.breakerProbe = false
            c.route?.breaker?.abandonProbe()
        }
        // No query is kept, and no password in the userinfo either.
        let url = (reply?.url ?? c.upstreamURL).map { Redaction.withoutPassword($0.prefix(upToByte: UInt8(ascii: "?"))) }
        telemetry.record(CompletionEvent(
            startedAt: c.startedWall, requestID: c.requestID, route: c.label, method: c.request.method, path: c.path, upstreamURL: url,
            status: status, upstreamStatus: reply?.status, contentType: reply?.contentType, serializer: outcome.serializer,
            outcome: outcome.label, bytesIn: outcome.upstreamBytes ?? reply?.body.count ?? 0, bytesOut: bytesOut, duration: duration,
            upstreamDuration: c.upstreamSeconds, serializeDuration: c.serializeSeconds, error: outcome.error,
            responseContentType: responseContentType, unsafeNumbers: c.unsafeNumbers,
            source: c.label.utf8.first == UInt8(ascii: "(") ? nil : c.source.rawValue, cache: c.cache?.result.rawValue,
            httpVersion: reply?.httpVersion, faults: c.network?.appliedText, exchange: exchange, stream: c.streamSummary,
            contractViolations: c.contractViolations, attempts: c.attempts > 1 ? c.attempts : nil,
            queueDuration: c.queueSeconds))
        if let trace = c.sampledTrace { finish(trace, c, status: status, outcome: outcome) }
    }

    /// The `SERVER` span (DESIGN §12), ending now, written after its children.
    private func finish(_ trace: RequestTrace, _ c: RequestContext, status: Int, outcome: Outcome) {
        let now = c.clock.now()
        // A stage that answered before it returned (a cache hit, a replay) ends with the request.
        switch trace.openStage {
        case "cache"?: trace.end(at: now, attributes: [SpanAttribute("serializerd.cache", CacheStage.spanResult(c))])
        case "tape"?: trace.end(at: now, attributes: c.route?.tape.map { TapeStage.spanAttributes($0, c) } ?? [])
        default: trace.end(at: now, attributes: [])
        }
        let failed = status >= 500 && status != Self.clientGoneStatus
        trace.finished(name: c.request.method, c.label, at: now, error: failed ? outcome.error ?? outcome.label : nil) { a in
            a.add("http.request.method", c.request.method)
            a.add("url.path", c.path)
            if let query = trace.query { a.add("url.query", query) }
            a.add("http.route", c.label)
            a.add("http.response.status_code", status)
            a.add("serializerd.outcome", outcome.label)
            a.add("serializerd.source", c.source.rawValue)
            a.add("serializerd.request_id", c.requestID)
            if failed { a.add("error.type", outcome.label) }
        }
    }

    /// The event of a request whose client left before the whole reply was sent.
    func recordGone(_ c: RequestContext, _ outcome: Outcome, duration: Double) {
        record(c, status: Self.clientGoneStatus, bytesOut: 0,
               outcome: Outcome(label: "client_gone", serializer: outcome.serializer, reply: outcome.reply,
                                error: "the client closed the connection before the whole reply was sent"),
               duration: duration, responseContentType: nil)
    }
}

extension CompletionRecorder.Outcome {
    init(_ failure: ProxyFailure, reply: UpstreamResponse? = nil, serializer: String? = nil) {
        self.init(label: failure.outcomeLabel, serializer: serializer, reply: reply, error: failure.detail ?? failure.title)
    }
}
