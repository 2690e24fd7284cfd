import HTTPCore
import Serializers

/// HAR 1.2 (the format browser devtools and HAR viewers import) for completion events.
/// Bodies and client headers are not kept, so `content` has sizes and types only;
/// serializerd's own fields travel as `_serializerd` (custom fields start with `_`).
public enum HAR {
    /// `origin` is the scheme and authority the client used, e.g. `http://127.0.0.1:8080`.
    public static func render(_ events: [CompletionEvent], origin: String, version: String) -> [UInt8] {
        var entries: [JSONValue] = []
        entries.reserveCapacity(events.count)
        for e in events { entries.append(entry(e, origin: origin)) }
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

    static func entry(_ e: CompletionEvent, origin: String) -> JSONValue {
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
        return .object([
            ("startedDateTime", .string(UTCTimestamp.format(unixSeconds: e.startedAt, fraction: .milliseconds))),
            ("time", milliseconds(e.duration)),
            ("request", .object([
                ("method", .string(e.method)),
                ("url", .string(e.path.hasPrefix("/") ? origin + e.path : e.path)),
                ("httpVersion", .string("HTTP/1.1")),
                ("cookies", .array([])),
                ("headers", .array([])),
                ("queryString", .array([])),
                ("headersSize", number(-1)),
                ("bodySize", number(-1)),
            ])),
            ("response", .object([
                ("status", number(e.status)),
                ("statusText", .string(HTTPReason.phrase(e.status))),
                ("httpVersion", .string("HTTP/1.1")),
                ("cookies", .array([])),
                ("headers", .array(responseHeaders)),
                ("content", .object([("size", number(e.bytesOut)), ("mimeType", .string(e.responseContentType ?? ""))])),
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

    static func header(_ name: String, _ value: String) -> JSONValue {
        .object([("name", .string(name)), ("value", .string(value))])
    }

    static func number(_ value: Int) -> JSONValue { .number(String(value)) }

    static func milliseconds(_ seconds: Double) -> JSONValue { .number(NumberText.milliseconds(seconds)) }
}
