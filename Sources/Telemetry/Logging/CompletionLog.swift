import Logging

/// The log sink: one `request_completed` line per event, in DESIGN §6's field order,
/// gathered in a per-worker buffer and written in batches (`flush`), so a busy
/// worker makes one write(2) for many requests and the request path makes none.
public final class CompletionLog: CompletionSink {
    let output: LogOutput
    private var buffer: [UInt8] = []

    public init(output: LogOutput) {
        self.output = output
        buffer.reserveCapacity(8 << 10)
    }

    public func record(_ event: CompletionEvent) {
        let level = event.level
        guard output.admits(level) else { return }
        if output.journalPrefix { buffer.append(contentsOf: "<\(LogOutput.priority(level))>".utf8) }
        switch output.format {
        case .json:
            // The same bytes the live stream sends, rendered once per event.
            buffer.append(contentsOf: event.json)
        case .text:
            var line = LogLine(format: .text, prefix: false, level: level, message: "request_completed", timestamp: event.timestamp)
            event.appendFields(to: &line)
            buffer.append(contentsOf: line.bytes)
        case .console:
            buffer.append(contentsOf: event.consoleLine.utf8)
        }
        buffer.append(0x0A)
        // A burst beyond 64 KiB goes out at once; otherwise the next flush writes it.
        if buffer.count >= 64 << 10 { flush() }
    }

    /// Writes what is buffered.
    public func flush() {
        guard !buffer.isEmpty else { return }
        output.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

extension CompletionEvent {
    /// Failures are warnings (4xx) or errors (5xx); health checks and scrapes that
    /// succeed are debug (a probe every few seconds would drown the log); the rest info.
    var level: Logger.Level {
        if status >= 500 { return .error }
        if status >= 400 { return .warning }
        if route == RouteLabel.admin && (path == "/-/health" || path == "/metrics") { return .debug }
        return .info
    }

    /// The console format: time, method, path, status, outcome, duration (upstream and
    /// serialize in brackets), route — aligned, the status and outcome coloured by class.
    var consoleLine: String {
        let time = String(decoding: timestamp.dropFirst(11).dropLast(), as: UTF8.self)   // HH:MM:SS.mmm
        let colour = switch status {
        case _ where outcome == "client_gone": "\u{1B}[35m"   // magenta: the client left
        case ..<400: "\u{1B}[32m"                             // green
        case ..<500: "\u{1B}[33m"                             // yellow
        default: "\u{1B}[31m"                                 // red
        }
        var stages: [String] = []
        if let upstreamDuration { stages.append("upstream " + Self.ms(upstreamDuration)) }
        if let serializeDuration { stages.append("serialize " + Self.ms(serializeDuration)) }
        var line = time + "  " + Self.pad(method, 7) + " " + Self.pad(path, 32) + " " + colour + String(status) + " "
            + Self.pad(outcome, 24) + "\u{1B}[0m" + Self.pad(Self.ms(duration), 10, left: true)
        if !stages.isEmpty { line += "  (" + stages.joined(separator: ", ") + ")" }
        line += "  " + route
        if let error { line += "  \u{1B}[2m" + error + "\u{1B}[0m" }
        return line
    }

    static func ms(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return left ? fill + text : text + fill
    }

    /// When the request finished, as the `ts` field.
    var timestamp: [UInt8] {
        var clock = LogClock()
        return clock.format(startedAt + duration)
    }

    /// The event as one JSON object: the log line (JSON format), the SSE `data:`, and a
    /// `/-/recent` element. Rendered once by `WorkerTelemetry`, then shared.
    public var json: [UInt8] {
        if let rendered { return rendered }
        var clock = LogClock()
        return renderJSON(clock: &clock)
    }

    /// `clock` caches the date part across a worker's events.
    func renderJSON(clock: inout LogClock) -> [UInt8] {
        // Written in scratch space, kept at its size: the bound allows for escapes that
        // rarely occur, and the event holds these bytes for as long as it lives.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: jsonBound) { buffer in
            Array(UnsafeBufferPointer(rebasing: buffer[..<writeJSON(to: buffer.baseAddress!, clock: &clock)]))
        }
    }

    func appendFields(to line: inout LogLine) {
        line.string("request_id", requestID)
        line.string("route", route)
        line.string("method", method)
        line.string("path", path)
        line.string("upstream_url", upstreamURL)
        line.int("status", status)
        line.int("upstream_status", upstreamStatus)
        line.string("content_type", contentType)
        line.string("serializer", serializer)
        line.string("outcome", outcome)
        line.int("bytes_in", bytesIn)
        line.int("bytes_out", bytesOut)
        line.milliseconds("duration_ms", duration)
        line.milliseconds("upstream_ms", upstreamDuration)
        line.milliseconds("serialize_ms", serializeDuration)
        line.int("unsafe_numbers", unsafeNumbers)
        line.string("source", source)
        line.string("cache", cache)
        line.string("http_version", httpVersion)
        line.string("faults", faults)
        line.string("error", error)
        // Only on a route with a contract the answer broke: other lines stay as they were.
        if let contractViolations { line.int("contract_violations", contractViolations) }
        if let attempts { line.int("attempts", attempts) }
        if let queueDuration { line.milliseconds("queue_ms", queueDuration) }
        if let stream { line.raw(dynamic: "stream", stream) }
    }
}
