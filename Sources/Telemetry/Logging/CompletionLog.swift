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
    /// Failures are warnings (4xx) or errors (5xx); everything else is info.
    var level: Logger.Level { status >= 500 ? .error : (status >= 400 ? .warning : .info) }

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
        var line = LogLine(format: .json, prefix: false, level: level, message: "request_completed",
                           timestamp: clock.format(startedAt + duration))
        line.bytes.reserveCapacity(512)
        appendFields(to: &line)
        line.bytes.append(UInt8(ascii: "}"))
        return line.bytes
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
        line.string("error", error)
    }
}
