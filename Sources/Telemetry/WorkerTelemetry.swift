import Logging
import Tracing

/// One worker's sinks behind the one protocol, in a fixed order: log, metrics, live.
/// Everything here runs on the worker's thread and takes no lock per event; the log
/// buffer and the live batch leave in batches through `flush` (the worker times it).
public final class WorkerTelemetry: CompletionSink {
    public let log: CompletionLog
    public let metrics: MetricsRecorder
    let hub: EventHub
    /// Where sampled requests' spans go.
    public let tracer: TraceExporter
    /// This worker's spans, in batches to `tracer`.
    public let spans: SpanWriter
    // Worker-thread only, never accessed across a call out: unchecked (see SessionManager).
    @exclusivity(unchecked) private var batch: [CompletionEvent] = []
    @exclusivity(unchecked) private var clock = LogClock()
    /// Where the live stream's frames are rendered before they are copied at their size.
    private var frameScratch: [UInt8] = []
    @exclusivity(unchecked) private var flushScheduled = false
    /// Set by the worker: arranges one `flush()` shortly (a few milliseconds).
    public var scheduleFlush: (() -> Void)?

    public init(_ telemetry: Telemetry) {
        log = CompletionLog(output: telemetry.output)
        metrics = telemetry.metrics.makeRecorder()
        hub = telemetry.hub
        tracer = telemetry.tracer
        spans = SpanWriter(exporter: telemetry.tracer)
    }

    public func record(_ event: CompletionEvent) {
        // The live view shows proxied flows, not the viewer's own admin requests.
        let live = event.route != RouteLabel.admin
        // JSON log lines are the same bytes the live stream sends: rendered once here
        // when the log takes them, or at flush for the stream alone.
        if log.output.format == .json && log.output.admits(event.level) {
            event.rendered = event.renderJSON(clock: &clock)
        }
        log.record(event)
        metrics.record(event)
        if live { batch.append(event) }
        if !flushScheduled {
            flushScheduled = true
            scheduleFlush?()
        }
    }

    /// The log lines and live events gathered since the last flush leave now.
    /// Subscribers served by this same worker are handed to `deliverLocally` (no wake-up
    /// through a pipe); others are woken on their own worker.
    public func flush() {
        flushScheduled = false
        log.flush()
        guard !batch.isEmpty else { return }
        let frames = hub.hasSubscribers ? EventFrames(batch, clock: &clock, scratch: &frameScratch) : nil
        // A burst's worth of scratch is not kept.
        if frameScratch.count > 1 << 20 { frameScratch = [] }
        let toWake = hub.publish(batch, frames: frames)
        batch.removeAll(keepingCapacity: true)
        for subscriber in toWake {
            if subscriber.owner === owner, let deliverLocally {
                deliverLocally(subscriber)
            } else {
                subscriber.wake()
            }
        }
    }

    /// This worker's identity, for subscribers it owns.
    public let owner = OwnerToken()
    /// Set by the worker: serve one of its own subscribers now.
    public var deliverLocally: ((Subscriber) -> Void)?
}

/// Identifies a worker to the hub.
public final class OwnerToken: Sendable {
    public init() {}
}
