import Cache
import EventLoop
import HTTPCore
import Network
import Serializers
import Telemetry
import Upstream

/// Builds what the client receives (DESIGN §3) from a request's context: normalized
/// JSON, a problem document, or the upstream response passed through; always
/// X-Request-Id and Server-Timing. Every reply leaves through `send`, which also has the
/// request's one completion event recorded.
struct ResponseWriter {
    let context: RequestContext

    init(_ context: RequestContext) { self.context = context }

    typealias Outcome = CompletionRecorder.Outcome

    /// The `Server-Timing` field, its value written on the stack and copied into the
    /// fields as bytes: this field is on every reply, and a String of it was an allocation.
    func appendTiming(total: Double, to headers: inout HeaderFields) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 + 4 * NumberText.maxMillisecondsLength) { buffer in
            var w = 0
            NumberText.put("total;dur=", into: buffer, at: &w)
            NumberText.putMilliseconds(total, into: buffer, at: &w)
            if let upstreamSeconds = context.upstreamSeconds {
                NumberText.put(", upstream;dur=", into: buffer, at: &w)
                NumberText.putMilliseconds(upstreamSeconds, into: buffer, at: &w)
            }
            // `retry`: the time before the last attempt began (the attempts and waits before it).
            if let retrySeconds = context.retrySeconds {
                NumberText.put(", retry;dur=", into: buffer, at: &w)
                NumberText.putMilliseconds(retrySeconds, into: buffer, at: &w)
            }
            if let serializeSeconds = context.serializeSeconds {
                NumberText.put(", serialize;dur=", into: buffer, at: &w)
                NumberText.putMilliseconds(serializeSeconds, into: buffer, at: &w)
            }
            headers.append("Server-Timing", value: UnsafeBufferPointer(rebasing: buffer[..<w]))
        }
    }

    func send(status: Int, headers: consuming HeaderFields, body: [UInt8], outcome: Outcome) {
        let contentType = headers.first("Content-Type")
        send(status: status, contentType: contentType, headers: headers, body: body, outcome: outcome)
    }

    /// `contentType`: the Content-Type `headers` carry, which the completion event reports
    /// (the writers that set it say it rather than have the fields searched).
    func send(status: Int, contentType: String?, headers: consuming HeaderFields, body: [UInt8], outcome: Outcome) {
        let c = context, recorder = context.recorder
        let sent = ReplyContent.isAbsent(method: c.request.method, status: status) ? [] : body
        let duration = c.clock.now() - c.started
        headers.append("X-Request-Id", c.requestID)
        // Every response of a route says where its payload came from.
        if c.label.utf8.first != UInt8(ascii: "(") { headers.append("Serializerd-Source", c.source.rawValue) }
        if let cache = c.cache { headers.append("Cache-Status", cache.status) }
        if let applied = c.network?.appliedText { headers.append("Serializerd-Fault-Applied", applied) }
        appendTiming(total: duration, to: &headers)
        let bytesOut = sent.count
        let exchange = recorder.captured(c, headers: headers, body: sent, reply: outcome.reply)
        let recordNow = {
            recorder.record(c, status: status, bytesOut: bytesOut, outcome: outcome, duration: duration, responseContentType: contentType,
                            exchange: exchange)
        }
        let shaping = c.network?.shaping
        if let ending = shaping?.ending, ending != .whole {
            // The client never gets all of it: the event says so, whatever the socket reports.
            let reset = ending == .reset
            let recordCut = {
                recorder.record(c, status: reset ? 0 : status, bytesOut: reset ? 0 : bytesOut / 2,
                                outcome: Outcome(label: "injected_fault", serializer: outcome.serializer, reply: outcome.reply,
                                                 error: reset ? "the connection was reset by an injected fault"
                                                              : "the reply was cut after half its body by an injected fault"),
                                duration: duration, responseContentType: contentType, exchange: exchange)
            }
            if case .pending = c.request.respond(status: status, headers: headers, body: sent, recordNow: {}, shaping: shaping) {
                c.request.whenFinished { _ in recordCut() }
            } else {
                recordCut()
            }
            return
        }
        switch c.request.respond(status: status, headers: headers, body: sent, recordNow: recordNow, shaping: shaping) {
        case .recorded:
            break
        case .delivered:
            recordNow()
        case .gone:
            recorder.recordGone(c, outcome, duration: duration)
        case .pending:
            // A reply larger than the socket takes at once: its event waits for the end.
            let outcome = outcome.withoutBody
            c.request.whenFinished { delivered in
                if delivered {
                    recorder.record(c, status: status, bytesOut: bytesOut, outcome: outcome, duration: duration,
                                    responseContentType: contentType, exchange: exchange)
                } else {
                    recorder.recordGone(c, outcome, duration: duration)
                }
            }
        }
    }

    func problem(_ failure: ProxyFailure, route: String?, extraHeaders: [(String, String)] = [],
                 reply: UpstreamResponse? = nil, serializer: String? = nil, hint: String? = nil) {
        var headers = HeaderFields()
        headers.append("Content-Type", ProblemDocument.contentType)
        for (name, value) in extraHeaders { headers.append(name, value) }
        // An upstream answered: its Date is the response's (the connection adds ours otherwise).
        if let reply { reply.headers.appending(where: HeaderPolicy.date.contains, to: &headers) }
        if case .methodNotAllowed(let allow) = failure { headers.append("Allow", allow.joined(separator: ", ")) }
        send(status: failure.clientStatus, contentType: ProblemDocument.contentType, headers: headers,
             body: ProblemDocument.render(failure, route: route, requestID: context.requestID, hint: hint),
             outcome: Outcome(failure, reply: reply, serializer: serializer))
    }

    /// A serialized value: the upstream status, JSON, the cache headers forwarded.
    func success(_ value: NormalizedJSON, serializer: String, reply: UpstreamResponse, envelope: Bool) {
        let cookies = context.passesCookies
        let bytes = envelope ? Self.envelope(reply, data: value.bytes, cookies: cookies) : value.bytes
        var headers = Self.successHeaders(serializer: serializer)
        reply.headers.appendEndToEnd(where: {
            HeaderPolicy.forwardedDownstream.contains($0) || cookies && HeaderPolicy.setCookie.contains($0)
        }, to: &headers)
        send(status: reply.status, contentType: Self.jsonType, headers: headers, body: bytes,
             outcome: Outcome(label: "ok", serializer: serializer, reply: reply))
    }

    static let jsonType = "application/json; charset=utf-8"

    /// The fields every normalized answer starts with, with room for the forwarded ones,
    /// X-Request-Id and Server-Timing.
    static func successHeaders(serializer: String) -> HeaderFields {
        var headers = HeaderFields()
        headers.reserveCapacity(512)
        headers.append("Content-Type", jsonType)
        headers.append("X-Serializerd-Serializer", serializer)
        return headers
    }

    /// A normalized answer with serializerd's tag (caching routes): a client's
    /// `If-None-Match` naming it gets a 304 without the body (RFC 9110 §13.1.2).
    func sendNormalized(status: Int, headers: consuming HeaderFields, body: [UInt8], tag: String?, outcome: Outcome) {
        guard let tag else { return send(status: status, contentType: Self.jsonType, headers: headers, body: body, outcome: outcome) }
        headers.append("ETag", tag)
        if (200...299).contains(status), let asked = context.request.fields.first("If-None-Match"), OutputTag.ifNoneMatch(asked, matches: tag) {
            headers.remove("Content-Type")
            return send(status: 304, contentType: nil, headers: headers, body: [], outcome: outcome)
        }
        send(status: status, contentType: Self.jsonType, headers: headers, body: body, outcome: outcome)
    }

    /// `on_failure: passthrough`: the upstream response, untouched but for framing. The
    /// event still carries the failure that made it a passthrough.
    func passthrough(_ reply: UpstreamResponse, failure: ProxyFailure, serializer: String?) {
        let headers = HeaderPolicy.endToEnd(reply.headers, cookies: context.passesCookies)
        send(status: reply.status, headers: headers, body: reply.body, outcome: Outcome(failure, reply: reply, serializer: serializer))
    }

    /// `{"status":…,"headers":{…},"data":…}` with lowercased header names.
    static func envelope(_ reply: UpstreamResponse, data: [UInt8], cookies: Bool = true) -> [UInt8] {
        var headers: [(String, JSONValue)] = []
        for (name, value) in HeaderPolicy.endToEnd(reply.headers, cookies: cookies).pairs {
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
