import HTTPCore
import Serializers

/// HAR 1.2 (the format browser devtools and HAR viewers import) for completion events:
/// the client's request (headers, query, body) and the answer it got, redacted by
/// `capture`, bodies up to `CapturedExchange.bodyLimit`. serializerd's own fields travel
/// as `_serializerd` (custom fields start with `_`), among them `upstream`: the upstream
/// exchange as a HAR entry of its own, which `serializerd tape import` takes.
public enum HAR {
    /// `origin` is the scheme and authority the client used, e.g. `http://127.0.0.1:8080`.
    /// `upstream` renders an event's upstream exchange as a HAR entry (redacted).
    public static func render(_ events: [CompletionEvent], origin: String, version: String, capture: Redaction = Redaction(),
                              upstream: (CompletionEvent, CapturedExchange.Upstream) -> JSONValue? = { _, _ in nil }) -> [UInt8] {
        var entries: [JSONValue] = []
        entries.reserveCapacity(events.count)
        for e in events { entries.append(entry(e, origin: origin, capture: capture, upstream: upstream)) }
        let log = JSONValue.object([
            ("log", .object([
                ("version", .string("1.2")),
                ("creator", .object([("name", .string("serializerd")), ("version", .string(version))])),
                ("pages", .array([])),
                ("entries", .array(entries)),
            ])),
        ])
        return NormalizedJSON(log).bytes
    }

    static func entry(_ e: CompletionEvent, origin: String, capture: Redaction,
                      upstream: (CompletionEvent, CapturedExchange.Upstream) -> JSONValue?) -> JSONValue {
        let wait = max(0, e.upstreamDuration ?? 0)
        let receive = max(0, e.serializeDuration ?? 0)
        let send = max(0, e.duration - wait - receive)
        var responseHeaders: [JSONValue] = [header("X-Request-Id", e.requestID)]
        if let type = e.responseContentType { responseHeaders.append(header("Content-Type", type)) }
        if let serializer = e.serializer { responseHeaders.append(header("X-Serializerd-Serializer", serializer)) }
        if let source = e.source { responseHeaders.append(header("Serializerd-Source", source)) }
        var custom: [(String, JSONValue)] = [("route", .string(e.route)), ("outcome", .string(e.outcome))]
        if let url = e.upstreamURL { custom.append(("upstream_url", .string(url))) }
        if let status = e.upstreamStatus { custom.append(("upstream_status", number(status))) }
        if let type = e.contentType { custom.append(("upstream_content_type", .string(type))) }
        custom.append(("upstream_bytes", number(e.bytesIn)))
        if let source = e.source { custom.append(("source", .string(source))) }
        if let error = e.error { custom.append(("error", .string(error))) }
        let x = e.exchange
        if let sent = x?.upstream, let rendered = upstream(e, sent) { custom.append(("upstream", rendered)) }
        // The client's URL: the route's origin and the target, its query redacted.
        let url = capture.url(origin + (x?.target ?? e.path))
        var request: [(String, JSONValue)] = [
            ("method", .string(e.method)),
            ("url", .string(url)),
            ("httpVersion", .string("HTTP/1.1")),
            ("cookies", .array([])),
            ("headers", .array((x.map { capture.headers($0.requestFields) } ?? []).map(header))),
            ("queryString", .array(queryString(url))),
            ("headersSize", number(-1)),
            ("bodySize", number(x?.requestBody.count ?? -1)),
        ]
        if let x, x.requestBody.count > 0 {
            let type = x.requestFields.first { $0.0.lowercased() == "content-type" }?.1
            request.append(("postData", .object([("mimeType", .string(type ?? ""))] + text(x.requestBody, type: type, capture: capture, encodingKey: "_encoding"))))
        }
        var content: [(String, JSONValue)] = [("size", number(e.bytesOut)), ("mimeType", .string(e.responseContentType ?? ""))]
        if let x, x.responseBody.count > 0 { content += text(x.responseBody, type: e.responseContentType, capture: capture, encodingKey: "encoding") }
        return .object([
            ("startedDateTime", .string(UTCTimestamp.format(unixSeconds: e.startedAt, fraction: .milliseconds))),
            ("time", milliseconds(e.duration)),
            ("request", .object(request)),
            ("response", .object([
                ("status", number(e.status)),
                ("statusText", .string(HTTPReason.phrase(e.status))),
                ("httpVersion", .string("HTTP/1.1")),
                ("cookies", .array([])),
                ("headers", .array(x.map { capture.headers($0.responseHeaders.pairs).map(header) } ?? responseHeaders)),
                ("content", .object(content)),
                ("redirectURL", .string("")),
                ("headersSize", number(-1)),
                ("bodySize", number(e.bytesOut)),
            ])),
            ("cache", .object([])),
            ("timings", .object([
                ("blocked", number(-1)), ("dns", number(-1)), ("connect", number(-1)), ("ssl", number(-1)),
                ("send", milliseconds(send)), ("wait", milliseconds(wait)), ("receive", milliseconds(receive)),
            ])),
            ("_serializerd", .object(custom)),
        ])
    }

    /// `text` (redacted; base64 and the encoding member when not UTF-8), or a comment
    /// when the body was over the limit and not kept.
    static func text(_ body: CapturedExchange.Body, type: String?, capture: Redaction, encodingKey: String) -> [(String, JSONValue)] {
        guard let bytes = body.bytes else {
            return [("comment", .string("body not kept: \(body.count) bytes, over \(CapturedExchange.bodyLimit)"))]
        }
        let problem = type.flatMap(MediaType.init)?.essence == "application/problem+json"
        let shown = problem ? redactedProblem(bytes, capture: capture) : capture.body(bytes, contentType: type) ?? bytes
        if UTF8Text.isValid(shown) { return [("text", .string(String(decoding: shown, as: UTF8.self)))] }
        return [("text", .string(String(decoding: Base64.encode(shown), as: UTF8.self))), (encodingKey, .string("base64"))]
    }

    /// A problem document holds the upstream's body at /upstream/body — parsed, or as text
    /// when the serializer could not read it: `capture` applies there too.
    static func redactedProblem(_ bytes: [UInt8], capture: Redaction) -> [UInt8] {
        guard case .object(var top)? = try? JSONValue.parse(bytes) else { return capture.body(bytes, contentType: nil) ?? bytes }
        if let u = top.firstIndex(where: { $0.0 == "upstream" }), case .object(var upstream) = top[u].1,
           let b = upstream.firstIndex(where: { $0.0 == "body" }), case .string(let text) = upstream[b].1 {
            var type: String?
            if case .string(let declared)? = upstream.first(where: { $0.0 == "content_type" })?.1 { type = declared }
            if let redacted = capture.body(Array(text.utf8), contentType: type) {
                upstream[b].1 = .string(String(decoding: redacted, as: UTF8.self))
                top[u].1 = .object(upstream)
            }
        }
        let rebuilt = NormalizedJSON(.object(top)).bytes
        return capture.alsoUnder(["upstream", "body"]).body(rebuilt, contentType: nil) ?? rebuilt
    }

    /// HAR's queryString: the URL's parameters, decoded.
    static func queryString(_ url: String) -> [JSONValue] { Redaction.queryPairs(url).map(header) }

    static func header(_ field: (String, String)) -> JSONValue { header(field.0, field.1) }

    static func header(_ name: String, _ value: String) -> JSONValue {
        .object([("name", .string(name)), ("value", .string(value))])
    }

    static func number(_ value: Int) -> JSONValue { .number(String(value)) }

    static func milliseconds(_ seconds: Double) -> JSONValue { .number(NumberText.milliseconds(seconds)) }
}
