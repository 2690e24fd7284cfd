import Cache
import EventLoop
import HTTPCore
import Network
import Serializers
import Telemetry
import Upstream

/// Builds what the client receives (DESIGN §3): normalized JSON, a problem document,
/// or the upstream response passed through; always X-Request-Id and Server-Timing.
/// Every reply leaves through `send`, which also emits the request's one completion event.
/// A class: every stage and callback of a request holds the same one, for a retain where
/// a struct of this size was copied field by field.
final class ResponseWriter {
    let request: any ClientExchange
    let requestID: String
    let started: Double
    let startedWall: Double
    let telemetry: WorkerTelemetry
    let clock: PipelineClock
    /// The route label for telemetry: the route's name once one matched.
    var route = RouteLabel.unmatched
    var path: String
    var upstreamURL: String?
    /// The request serializerd sent upstream (or would have: a tape or a mock answered),
    /// for the full HAR.
    var upstreamRequest: UpstreamSent?
    var upstreamSeconds: Double?
    var serializeSeconds: Double?
    /// Unsafe numbers the route's output.numbers found in the payload.
    var unsafeNumbers: Int?
    /// Where the payload came from (`Serializerd-Source`, DESIGN §3).
    var source = Source.upstream
    /// On caching routes: how the cache met the request (`Cache-Status`, DESIGN §3).
    var cache: CacheNote?
    /// Whether the upstream's Set-Cookie reaches the client (`cookies: pass`, the default).
    var passesCookies = true
    /// What the route's network conditions do to this request (DESIGN §3).
    var network: NetworkPlan?

    struct CacheNote {
        var result: CacheResult
        /// The `Cache-Status` field value.
        var status: String
    }

    enum Source: String {
        case upstream, tape, mock, cache
    }

    struct UpstreamSent {
        /// `Name: value` lines, NUL-terminated (HeaderLines' bytes).
        var lines: [UInt8]
        var body: [UInt8]
    }

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

    init(request: any ClientExchange, requestID: String, telemetry: WorkerTelemetry, clock: PipelineClock, path: String) {
        self.request = request
        self.requestID = requestID
        self.telemetry = telemetry
        self.path = path
        self.clock = clock
        started = clock.now()
        startedWall = clock.wall()
    }

    /// One string, written in place: this header is on every reply.
    func timingHeader(total: Double) -> (String, String) {
        let value = String(unsafeUninitializedCapacity: 48 + 3 * NumberText.maxMillisecondsLength) { buffer in
            var w = 0
            NumberText.put("total;dur=", into: buffer, at: &w)
            NumberText.putMilliseconds(total, into: buffer, at: &w)
            if let upstreamSeconds {
                NumberText.put(", upstream;dur=", into: buffer, at: &w)
                NumberText.putMilliseconds(upstreamSeconds, into: buffer, at: &w)
            }
            if let serializeSeconds {
                NumberText.put(", serialize;dur=", into: buffer, at: &w)
                NumberText.putMilliseconds(serializeSeconds, into: buffer, at: &w)
            }
            return w
        }
        return ("Server-Timing", value)
    }

    func send(status: Int, headers: consuming [(String, String)], body: [UInt8], outcome: Outcome) {
        let sent = ReplyContent.isAbsent(method: request.method, status: status) ? [] : body
        let duration = clock.now() - started
        let contentType = headers.first { $0.0 == "Content-Type" }?.1
        headers.append(("X-Request-Id", requestID))
        // Every response of a route says where its payload came from.
        if route.utf8.first != UInt8(ascii: "(") { headers.append(("Serializerd-Source", source.rawValue)) }
        if let cache { headers.append(("Cache-Status", cache.status)) }
        if let applied = network?.appliedText { headers.append(("Serializerd-Fault-Applied", applied)) }
        headers.append(timingHeader(total: duration))
        let bytesOut = sent.count
        let exchange = captured(headers: headers, body: sent, reply: outcome.reply)
        let recordNow = { [self] in
            record(status: status, bytesOut: bytesOut, outcome: outcome, duration: duration, responseContentType: contentType,
                   exchange: exchange)
        }
        let shaping = network?.shaping
        if let ending = shaping?.ending, ending != .whole {
            // The client never gets all of it: the event says so, whatever the socket reports.
            let reset = ending == .reset
            let recordCut = { [self] in
                record(status: reset ? 0 : status, bytesOut: reset ? 0 : bytesOut / 2,
                       outcome: Outcome(label: "injected_fault", serializer: outcome.serializer, reply: outcome.reply,
                                        error: reset ? "the connection was reset by an injected fault"
                                                     : "the reply was cut after half its body by an injected fault"),
                       duration: duration, responseContentType: contentType, exchange: exchange)
            }
            if case .pending = request.respond(status: status, headers: headers, body: sent, recordNow: {}, shaping: shaping) {
                request.whenFinished { _ in recordCut() }
            } else {
                recordCut()
            }
            return
        }
        switch request.respond(status: status, headers: headers, body: sent, recordNow: recordNow, shaping: shaping) {
        case .recorded:
            break
        case .delivered:
            recordNow()
        case .gone:
            recordGone(outcome, duration: duration)
        case .pending:
            // A reply larger than the socket takes at once: its event waits for the end.
            let outcome = outcome.withoutBody
            request.whenFinished { [self] delivered in
                if delivered {
                    record(status: status, bytesOut: bytesOut, outcome: outcome, duration: duration, responseContentType: contentType,
                           exchange: exchange)
                } else {
                    recordGone(outcome, duration: duration)
                }
            }
        }
    }

    private func recordGone(_ outcome: Outcome, duration: Double) {
        record(status: ResponseWriter.clientGoneStatus, bytesOut: 0,
               outcome: Outcome(label: "client_gone", serializer: outcome.serializer, reply: outcome.reply,
                                error: "the client closed the connection before the whole reply was sent"),
               duration: duration, responseContentType: nil)
    }

    /// What the full HAR shows of this exchange: references to buffers it already holds
    /// (the request head as received among them).
    func captured(headers: [(String, String)], body: [UInt8], reply: UpstreamResponse?) -> CapturedExchange {
        let upstream = reply.map { reply in
            CapturedExchange.Upstream(method: request.method, url: reply.url,
                                      requestLines: upstreamRequest?.lines ?? [], requestBody: upstreamRequest?.body ?? [],
                                      status: reply.status, responseLines: reply.headers.lines, responseBody: reply.body)
        }
        return CapturedExchange(target: request.target, head: request.headBytes, requestBody: request.body, responseHeaders: headers,
                                responseBody: body, upstream: upstream)
    }

    /// The request's one completion event (also for event streams, when they end).
    func record(status: Int, bytesOut: Int, outcome: Outcome, duration: Double, responseContentType: String?,
                exchange: CapturedExchange? = nil) {
        let reply = outcome.reply
        // No query is kept, and no password in the userinfo either.
        let url = (reply?.url ?? upstreamURL).map { Redaction.withoutPassword($0.prefix(upToByte: UInt8(ascii: "?"))) }
        telemetry.record(CompletionEvent(
            startedAt: startedWall, requestID: requestID, route: route, method: request.method, path: path, upstreamURL: url,
            status: status, upstreamStatus: reply?.status, contentType: reply?.contentType, serializer: outcome.serializer,
            outcome: outcome.label, bytesIn: outcome.upstreamBytes ?? reply?.body.count ?? 0, bytesOut: bytesOut, duration: duration,
            upstreamDuration: upstreamSeconds, serializeDuration: serializeSeconds, error: outcome.error,
            responseContentType: responseContentType, unsafeNumbers: unsafeNumbers,
            source: route.utf8.first == UInt8(ascii: "(") ? nil : source.rawValue, cache: cache?.result.rawValue,
            httpVersion: reply?.httpVersion, faults: network?.appliedText, exchange: exchange))
    }

    /// nginx's code for "the client closed the connection first": no status was sent.
    static let clientGoneStatus = 499

    func problem(_ failure: ProxyFailure, route: String?, extraHeaders: [(String, String)] = [],
                 reply: UpstreamResponse? = nil, serializer: String? = nil, hint: String? = nil) {
        var headers = [("Content-Type", ProblemDocument.contentType)] + extraHeaders
        // An upstream answered: its Date is the response's (the connection adds ours otherwise).
        if let reply { reply.headers.appendFields(where: HeaderPolicy.date.contains, to: &headers) }
        if case .methodNotAllowed(let allow) = failure { headers.append(("Allow", allow.joined(separator: ", "))) }
        send(status: failure.clientStatus, headers: headers,
             body: ProblemDocument.render(failure, route: route, requestID: requestID, hint: hint),
             outcome: Outcome(failure, reply: reply, serializer: serializer))
    }

    /// A serialized value: the upstream status, JSON, the cache headers forwarded.
    func success(_ value: NormalizedJSON, serializer: String, reply: UpstreamResponse, envelope: Bool) {
        let bytes = envelope ? Self.envelope(reply, data: value.bytes, cookies: passesCookies) : value.bytes
        var headers = Self.successHeaders(serializer: serializer, capacity: 12)
        let cookies = passesCookies
        reply.headers.appendEndToEndFields(where: {
            HeaderPolicy.forwardedDownstream.contains($0) || cookies && HeaderPolicy.setCookie.contains($0)
        }, to: &headers)
        send(status: reply.status, headers: headers, body: bytes, outcome: Outcome(label: "ok", serializer: serializer, reply: reply))
    }

    /// The fields every normalized answer starts with; `capacity` leaves room for the
    /// forwarded ones, X-Request-Id and Server-Timing.
    static func successHeaders(serializer: String, capacity: Int) -> [(String, String)] {
        var headers: [(String, String)] = []
        headers.reserveCapacity(capacity)
        headers.append(("Content-Type", "application/json; charset=utf-8"))
        headers.append(("X-Serializerd-Serializer", serializer))
        return headers
    }

    /// A normalized answer with serializerd's tag (caching routes): a client's
    /// `If-None-Match` naming it gets a 304 without the body (RFC 9110 §13.1.2).
    func sendNormalized(status: Int, headers: consuming [(String, String)], body: [UInt8], tag: String?, outcome: Outcome) {
        guard let tag else { return send(status: status, headers: headers, body: body, outcome: outcome) }
        headers.append(("ETag", tag))
        if (200...299).contains(status), let asked = request.header("If-None-Match"), OutputTag.ifNoneMatch(asked, matches: tag) {
            headers.removeAll { $0.0 == "Content-Type" }
            return send(status: 304, headers: headers, body: [], outcome: outcome)
        }
        send(status: status, headers: headers, body: body, outcome: outcome)
    }

    /// `on_failure: passthrough`: the upstream response, untouched but for framing. The
    /// event still carries the failure that made it a passthrough.
    func passthrough(_ reply: UpstreamResponse, failure: ProxyFailure, serializer: String?) {
        let headers = HeaderPolicy.endToEnd(reply.headers, cookies: passesCookies)
        send(status: reply.status, headers: headers, body: reply.body, outcome: Outcome(failure, reply: reply, serializer: serializer))
    }

    /// `{"status":…,"headers":{…},"data":…}` with lowercased header names.
    static func envelope(_ reply: UpstreamResponse, data: [UInt8], cookies: Bool = true) -> [UInt8] {
        var headers: [(String, JSONValue)] = []
        for (name, value) in HeaderPolicy.endToEnd(reply.headers, cookies: cookies) {
            let key = name.lowercased()
            headers.removeAll { $0.0 == key }
            headers.append((key, .string(value)))
        }
        var out = Array("{\"status\":\(reply.status),\"headers\":".utf8)
        out += NormalizedJSON(.object(headers)).bytes
        out += Array(",\"data\":".utf8) + data + [UInt8(ascii: "}")]
        return out
    }
}

extension ResponseWriter.Outcome {
    init(_ failure: ProxyFailure, reply: UpstreamResponse? = nil, serializer: String? = nil) {
        self.init(label: failure.outcomeLabel, serializer: serializer, reply: reply, error: failure.detail ?? failure.title)
    }
}
