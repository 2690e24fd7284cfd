import HTTPCore
import Tracing
import Upstream

/// A routed request's place in a trace while tracing is on (DESIGN §12): the trace it
/// continues or begins, its `SERVER` span's id, and — when sampled — the child spans
/// and events its stages record. Times are the pipeline's monotonic seconds, turned into
/// wall-clock nanoseconds from the request's start, so children sit inside their parent.
/// Its worker's thread alone uses it: its fields are not checked for exclusivity.
final class RequestTrace {
    let traceHigh: UInt64
    let traceLow: UInt64
    /// The client's span (its `traceparent`), or 0.
    let parentSpanID: UInt64
    let serverSpanID: UInt64
    let sampled: Bool
    /// The request's method, which names the upstream attempts' spans.
    let method: String
    /// The client's `tracestate`, forwarded as it came (only with a valid `traceparent`).
    let traceState: String?
    /// The request's query, redacted by `capture` (sampled requests only).
    @exclusivity(unchecked) var query: String?
    private let startedNanos: UInt64
    private let started: Double
    /// Where the spans go (sampled requests only), until the request's own span is
    /// written: a child that ends after that is not.
    @exclusivity(unchecked) private var spans: SpanWriter?
    @exclusivity(unchecked) private(set) var events: [SpanEvent] = []
    /// The upstream attempt under way: its span's id and when it was sent.
    @exclusivity(unchecked) var attemptSpanID: UInt64 = 0
    @exclusivity(unchecked) var attemptStarted = 0.0

    init(client: TraceParent?, traceState: String?, sampled: Bool, method: String, ids: inout TraceIDSource, started: Double,
         startedWall: Double, spans: SpanWriter) {
        self.method = method
        if let client {
            traceHigh = client.traceHigh
            traceLow = client.traceLow
            parentSpanID = client.spanID
        } else {
            traceHigh = ids.next()
            traceLow = ids.next()
            parentSpanID = 0
        }
        serverSpanID = ids.next()
        self.sampled = sampled
        self.traceState = traceState
        self.started = started
        startedNanos = UInt64(max(0, startedWall) * 1e9)
        if sampled { self.spans = spans }
    }

    var traceID: TraceID { TraceID(high: traceHigh, low: traceLow) }

    func nanos(_ monotonic: Double) -> UInt64 { startedNanos &+ UInt64(max(0, (monotonic - started) * 1e9)) }

    /// The `traceparent` an upstream request carries: this trace, the attempt's span.
    func upstreamField(spanID: UInt64) -> TraceParent {
        TraceParent(traceHigh: traceHigh, traceLow: traceLow, spanID: spanID, flags: sampled ? 1 : 0)
    }

    /// A stage's span, a child of the `SERVER` span (sampled requests only). Children end
    /// before the request does (one monotonic clock), so they sit inside its span; an end
    /// before the start is written as the start.
    func child(_ name: String, kind: SpanKind = .internal, id: UInt64, from: Double, to: Double, error: String? = nil,
               attributes: (inout SpanAttributes) -> Void = { _ in }) {
        spans?.write { $0.span(traceID, name, kind: kind, id: id, parent: serverSpanID, start: nanos(from), end: nanos(to), error: error,
                               attributes: attributes) }
    }

    func child(_ name: String, kind: SpanKind = .internal, id: UInt64, from: Double, to: Double, attributes list: [SpanAttribute],
               error: String? = nil) {
        child(name, kind: kind, id: id, from: from, to: to, error: error) { $0.add(contentsOf: list) }
    }

    /// A stage under way whose answer may finish the request before the stage returns
    /// (a cache hit, a replay): its span is ended by whichever comes first. Stages record
    /// stages and events only on a sampled trace (`RequestContext.sampledTrace`).
    @exclusivity(unchecked) private var open: (name: String, id: UInt64, start: Double)?

    func begin(_ name: String, id: UInt64, at time: Double) {
        open = (name, id, time)
    }

    /// Ends the stage under way, if the request has not already ended it.
    func end(at time: Double, attributes: [SpanAttribute], error: String? = nil) {
        guard let stage = open else { return }
        open = nil
        child(stage.name, id: stage.id, from: stage.start, to: time, attributes: attributes, error: error)
    }

    /// The stage under way, if any: its name.
    var openStage: String? { open?.name }

    /// An event on the `SERVER` span: a fault, a retry, a stale answer.
    func event(_ name: StaticString, at time: Double, _ attributes: [SpanAttribute] = []) {
        events.append(SpanEvent(name: name, time: nanos(time), attributes: attributes))
    }

    /// The request answered (or its stream ended): the `SERVER` span, named `name` +
    /// " " + `suffix`, written after its children.
    func finished(name: String, _ suffix: String, at end: Double, error: String?, attributes: (inout SpanAttributes) -> Void) {
        guard let spans else { return }
        self.spans = nil
        spans.write {
            $0.span(traceID, name, suffix, kind: .server, id: serverSpanID, parent: parentSpanID, start: startedNanos, end: nanos(end),
                    traceState: traceState, events: events, error: error, attributes: attributes)
        }
    }
}

extension RequestPipeline {
    static let traceParentName = HeaderNames(["traceparent"])
    static let traceStateName = HeaderNames(["tracestate"])

    /// With `tracing:` on, a routed request's trace: the client's continued when its
    /// `traceparent` is valid (its sampled flag decides), else a new one that `sample` decides.
    func beginTrace(_ context: RequestContext, _ tracing: TracingSettings) {
        let fields = context.request.fields
        var client: TraceParent?
        var count = 0
        fields.forEach { name, value in
            guard Self.traceParentName.contains(name) else { return }
            count += 1
            client = TraceParent(HeaderFields.trimmed(value))
        }
        // Two traceparent fields are no valid one.
        if count > 1 { client = nil }
        var state: String?
        if client != nil {
            let states = fields.values("tracestate")
            if !states.isEmpty { state = states.joined(separator: ",") }
        }
        let sampled = client?.sampled ?? (tracing.sample >= 1 || (tracing.sample > 0 && traceIDs.unit() < tracing.sample))
        let trace = RequestTrace(client: client, traceState: state, sampled: sampled, method: context.request.method, ids: &traceIDs,
                                 started: context.started, startedWall: context.startedWall, spans: telemetry.spans)
        if sampled, let query = context.query { trace.query = config.capture.query(query) }
        context.trace = trace
    }

    /// The upstream request as this attempt sends it: its `traceparent` names the attempt's span.
    func traced(_ upstream: UpstreamRequest, _ trace: RequestTrace) -> UpstreamRequest {
        var sent = upstream
        trace.attemptSpanID = traceIDs.next()
        trace.attemptStarted = clock.now()
        sent.traceparent = trace.upstreamField(spanID: trace.attemptSpanID)
        if let state = trace.traceState { sent.headers.append("tracestate", state) }
        return sent
    }

    /// An upstream attempt's `CLIENT` span, once its outcome is in.
    func endAttempt(_ trace: RequestTrace, _ result: Result<UpstreamResponse, UpstreamFailure>, route: Route, attempt: Int) {
        guard trace.sampled else { return }
        var error: String?
        switch result {
        case .success(let reply): if reply.status >= 500 { error = "the upstream answered \(reply.status)" }
        case .failure(let failure): error = failure.description
        }
        trace.child(trace.method, kind: .client, id: trace.attemptSpanID, from: trace.attemptStarted, to: clock.now(), error: error) { a in
            a.add("http.request.method", trace.method)
            a.add(encoded: route.upstreamSpanAttributes)
            if attempt > 1 { a.add("http.request.resend_count", attempt - 1) }
            switch result {
            case .success(let reply):
                a.add("http.response.status_code", reply.status)
                if let version = reply.httpVersion { a.add("network.protocol.version", version) }
                if reply.status >= 500 { a.add("error.type", String(reply.status)) }
            case .failure(let failure):
                a.add("error.type", failure.errorType)
            }
        }
    }
}

extension Route {
    /// The upstream's host (IPv6 without its brackets) and port (the scheme's when the URL
    /// names none).
    static func hostAndPort(_ upstream: UpstreamBase) -> (String, Int) {
        let authority = upstream.authority
        var host = Substring(authority), rest = Substring("")
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            rest = authority[authority.index(after: close)...]
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            rest = authority[colon...]
        }
        let port = rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil
        return (String(host), port ?? (upstream.scheme == "https" ? 443 : 80))
    }
}
