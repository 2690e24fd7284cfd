import Logging

/// The log sink: one `request_completed` line per event, in DESIGN §6's field order,
/// gathered in a per-worker buffer and written once per loop turn (`flush`), so a busy
/// worker makes one write(2) for many requests and the request path makes none.
public final class CompletionLog: CompletionSink {
    let output: LogOutput
    private var buffer: [UInt8] = []
    private var clock = LogClock()

    public init(output: LogOutput) {
        self.output = output
        buffer.reserveCapacity(8 << 10)
    }

    public func record(_ e: CompletionEvent) {
        let level = e.level
        guard output.admits(level) else { return }
        var line = LogLine(into: buffer, output: output, level: level, message: "request_completed",
                           timestamp: clock.format(LogClock.nowSeconds()))
        buffer = []
        e.appendFields(to: &line)
        line.finish()
        buffer = line.bytes
        // A burst beyond 64 KiB goes out at once; otherwise the loop turn's flush writes it.
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

    /// The event as one JSON object, the same line the log writes (SSE and /-/recent).
    public var json: [UInt8] {
        var clock = LogClock()
        var line = LogLine(format: .json, prefix: false, level: level, message: "request_completed",
                           timestamp: clock.format(startedAt + duration))
        appendFields(to: &line)
        return line.bytes + [UInt8(ascii: "}")]
    }

    func appendFields(to line: inout LogLine) {
        let e = self
        line.string("request_id", e.requestID)
        line.string("route", e.route)
        line.string("method", e.method)
        line.string("path", e.path)
        line.string("upstream_url", e.upstreamURL)
        line.int("status", e.status)
        line.int("upstream_status", e.upstreamStatus)
        line.string("content_type", e.contentType)
        line.string("serializer", e.serializer)
        line.string("outcome", e.outcome)
        line.int("bytes_in", e.bytesIn)
        line.int("bytes_out", e.bytesOut)
        line.milliseconds("duration_ms", e.duration)
        line.milliseconds("upstream_ms", e.upstreamDuration)
        line.milliseconds("serialize_ms", e.serializeDuration)
        line.string("error", e.error)
    }
}
