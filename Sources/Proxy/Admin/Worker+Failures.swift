import HTTPCore
import Serializers
import Telemetry
import Upstream

/// Failure evidence (DESIGN §6): kept when a serializer refuses an upstream response,
/// served by `/-/failures`.
extension Worker {
    /// `GET /-/failures`: the evidence kept, newest first.
    func serveFailureList(_ r: AdminRequest) {
        let list = config.keepFailures ? shared.failures.all() : []
        r.writer.sendJSON(NormalizedJSON(.object([
            ("keep_failures", .bool(config.keepFailures)),
            ("capacity", .number(String(FailureStore.capacity))),
            ("failures", .array(list.reversed().map(Self.summary))),
        ])).bytes)
    }

    /// `GET /-/failures/<request-id>`: one failure's evidence.
    func serveFailure(_ r: AdminRequest) {
        let id = Self.requestID(r.parameter)
        guard config.keepFailures, let evidence = shared.failures.find(id) else { return r.writer.problem(.noSuchFailure(id), route: nil) }
        r.writer.sendJSON(NormalizedJSON(Self.document(evidence)).bytes)
    }

    /// `GET /-/failures/<request-id>/body`: the upstream's body as it came.
    func serveFailureBody(_ r: AdminRequest) {
        let id = Self.requestID(r.parameter)
        guard config.keepFailures, let evidence = shared.failures.find(id) else { return r.writer.problem(.noSuchFailure(id), route: nil) }
        // Never the upstream's own type: the bytes are hostile input to a browser.
        r.writer.send(status: 200, headers: HeaderFields([("Content-Type", "application/octet-stream"), ("X-Content-Type-Options", "nosniff"),
                                                          ("Content-Disposition", "attachment; filename=\"\(ReproduceCommand.bodyFileName(id))\"")]),
                      body: evidence.body, outcome: .ok)
    }

    /// `GET /-/streams/<request-id>`: a stream's or WebSocket's last events, kept while
    /// someone watched `/-/events` (the inspector does).
    func serveStreamEvents(_ r: AdminRequest) {
        let id = Self.requestID(r.parameter)
        guard let stream = shared.streams.find(id) else {
            return r.writer.problem(.noSuchStream(id), route: nil)
        }
        let events: [JSONValue] = stream.entries.map { e in
            var fields: [(String, JSONValue)] = [("time", .string(UTCTimestamp.format(unixSeconds: e.time, fraction: .milliseconds)))]
            if let direction = e.direction { fields.append(("direction", .string(direction))) }
            if let label = e.label { fields.append(("event", .string(label))) }
            fields.append(("data", .string(String(decoding: e.data, as: UTF8.self))))
            fields.append(("bytes", .number(String(e.bytes))))
            fields.append(("truncated", .bool(e.bytes > e.data.count)))
            return .object(fields)
        }
        r.writer.sendJSON(NormalizedJSON(.object([("request_id", .string(stream.requestID)), ("kind", .string(stream.kind)),
                                                  ("open", .bool(stream.open)), ("events", .array(events))])).bytes)
    }

    /// The request id a path segment names (percent-decoded).
    static func requestID(_ segment: String) -> String {
        String(decoding: Percent.decode(Array(segment.utf8)), as: UTF8.self)
    }

    /// A list entry: enough to find a failure and see what it was.
    static func summary(_ e: FailureEvidence) -> JSONValue {
        .object([
            ("request_id", .string(e.requestID)),
            ("time", .string(UTCTimestamp.format(unixSeconds: e.startedAt, fraction: .milliseconds))),
            ("route", .string(e.route)), ("method", .string(e.method)), ("path", .string(e.path)),
            ("upstream_status", .number(String(e.status))),
            ("content_type", e.contentType.map(JSONValue.string) ?? .null),
            ("type", .string(e.problemType)),
            ("body_bytes", .number(String(e.bodyBytes))),
            ("href", .string("/-/failures/" + Percent.segment(e.requestID))),
        ])
    }

    /// One failure whole: the upstream's response (body in base64), the problem document
    /// the client got, and the command that reproduces it on the saved body.
    static func document(_ e: FailureEvidence) -> JSONValue {
        let problem = (try? JSONValue.parse(e.problem)) ?? .null
        let argv = ["serializerd", "transcode"] + e.transcodeArguments
        return .object([
            ("request_id", .string(e.requestID)),
            ("time", .string(UTCTimestamp.format(unixSeconds: e.startedAt, fraction: .milliseconds))),
            ("route", .string(e.route)), ("method", .string(e.method)), ("path", .string(e.path)),
            ("upstream", .object([
                ("url", .string(e.upstreamURL)),
                ("status", .number(String(e.status))),
                ("headers", .array(e.headers.map { .array([.string($0.0), .string($0.1)]) })),
                ("content_type", e.contentType.map(JSONValue.string) ?? .null),
                ("body_base64", .string(String(decoding: Base64.encode(e.body), as: UTF8.self))),
                ("body_bytes", .number(String(e.bodyBytes))),
                ("body_truncated", .bool(e.truncated)),
            ])),
            ("problem", problem),
            // Save the body as `body_file` (GET `body_path`), then run `command` beside it.
            ("reproduce", .object([
                ("body_path", .string("/-/failures/" + Percent.segment(e.requestID) + "/body")),
                ("body_file", .string(e.transcodeArguments.last ?? "")),
                ("argv", .array(argv.map(JSONValue.string))),
                ("command", .string(ReproduceCommand.shellLine(argv))),
            ])),
        ])
    }
}
