import Logging
import Tracing

/// The process's telemetry: where log lines go, the metrics shards, the event hub, the
/// failure evidence.
/// Shared by all threads; each worker takes a `WorkerTelemetry` of its own.
public final class Telemetry: Sendable {
    public let output: LogOutput
    public let metrics: MetricsRegistry
    public let hub: EventHub
    public let failures: FailureStore
    /// The last events of the last streams and WebSockets, while the inspector watches.
    public let streams = StreamLog()
    /// Sampled requests' spans on their way to the collector (DESIGN §12).
    public let tracer: TraceExporter

    /// `spans`: how batches reach the collector (none: every span is dropped).
    public init(output: LogOutput, version: String, startTime: Double, spans: any SpanSender = NoSpanSender()) {
        self.output = output
        tracer = TraceExporter(sender: spans, version: version)
        metrics = MetricsRegistry(version: version, startTime: startTime)
        hub = EventHub(metrics: metrics)
        failures = FailureStore(metrics: metrics)
    }

    /// The logger for lifecycle events (ready, reload, shutdown, config errors).
    public func logger(_ label: String = "serializerd") -> Logger {
        Logger(label: label) { [output] label in LineLogHandler(label: label, output: output) }
    }
}
