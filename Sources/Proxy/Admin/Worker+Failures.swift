import HTTPCore
import Serializers
import Telemetry
import Upstream

/// Failure evidence (DESIGN §6): kept when a serializer refuses an upstream response,
/// served by `/-/failures`.
extension Worker {
    /// Keeps what the upstream sent and how to redo the serialization offline, redacted
    /// by `capture` first: the URL, the headers, JSON and form bodies, and the problem
    /// document rendered from them. Runs on the failure path only: the success path
    /// never reaches the store's lock.
    func keepEvidence(_ reply: UpstreamReply, error: SerializationError, evidence: UpstreamEvidence, route: Route,
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
            transcodeArguments: Self.transcodeArguments(reply, route: route, file: Self.bodyFileName(writer.requestID))))
    }

    /// `serializerd transcode`'s arguments for this route and this reply: the serializer,
    /// the upstream's Content-Type (`''` when it sent none) and status, every response
    /// setting that differs from the default, and the saved body's file.
    static func transcodeArguments(_ reply: UpstreamReply, route: Route, file: String) -> [String] {
        var arguments = ["--serializer", route.response.serializer.rawValue, "--content-type", reply.contentType ?? "",
                         "--status", String(reply.status)]
        for option in route.response.optionArguments { arguments += ["--option", option] }
        if route.output.canonical { arguments += ["--option", "canonical=true"] }
        if let numbers = route.output.numbers { arguments += ["--option", "numbers=" + numbers.rawValue] }
        if route.response.maxOutput != OutputBudget.defaultCap { arguments += ["--max-response-body", String(route.response.maxOutput)] }
        arguments.append(file)
        return arguments
    }

    /// A file name for the saved body: the request id with anything but letters, digits,
    /// `.`, `_` and `-` replaced (a client's X-Request-Id may hold `/` or quotes).
    static func bodyFileName(_ requestID: String) -> String {
        let safe = requestID.unicodeScalars.map { c -> Character in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "." || c == "_" || c == "-") ? Character(c) : "_"
        }
        return "failure-" + String(safe) + ".body"
    }

    /// The arguments as one line for a POSIX shell: single-quoted where needed.
    static func shellLine(_ arguments: [String]) -> String {
        arguments.map { argument in
            let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_./:=,+@%".unicodeScalars.contains($0))
            }
            guard !plain else { return argument }
            var quoted = "'"
            for c in argument { quoted += c == "'" ? "'\\''" : String(c) }
            return quoted + "'"
        }.joined(separator: " ")
    }

    func serveFailures(_ endpoint: AdminEndpoint, writer: ResponseWriter) {
        switch endpoint {
        case .failures:
            let list = config.keepFailures ? shared.failures.all() : []
            writer.sendJSON(NormalizedJSON(.object([
                ("keep_failures", .bool(config.keepFailures)),
                ("capacity", .number(String(FailureStore.capacity))),
                ("failures", .array(list.reversed().map(Self.summary))),
            ])).bytes)
        case .failure(let id):
            guard config.keepFailures, let evidence = shared.failures.find(id) else { return writer.problem(.noSuchFailure(id), route: nil) }
            writer.sendJSON(NormalizedJSON(Self.document(evidence)).bytes)
        case .failureBody(let id):
            guard config.keepFailures, let evidence = shared.failures.find(id) else { return writer.problem(.noSuchFailure(id), route: nil) }
            // Never the upstream's own type: the bytes are hostile input to a browser.
            writer.send(status: 200, headers: [("Content-Type", "application/octet-stream"), ("X-Content-Type-Options", "nosniff"),
                                               ("Content-Disposition", "attachment; filename=\"\(Self.bodyFileName(id))\"")],
                        body: evidence.body, outcome: .ok)
        default:
            writer.problem(.noSuchFailure(""), route: nil)
        }
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
                ("command", .string(shellLine(argv))),
            ])),
        ])
    }
}
