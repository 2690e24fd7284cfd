import HTTPCore

/// A trace's 16-byte id, as two words.
public struct TraceID: Sendable, Equatable {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}

/// One OTLP/HTTP JSON body under way (DESIGN §12): an `ExportTraceServiceRequest` (ids as
/// hex, 64-bit integers as decimal strings, enums as numbers, the empty and the zero left
/// out) whose spans are written the moment they end, whichever request they belong to — a
/// collector joins spans by their ids. One worker writes it, then hands it to the exporter
/// and never touches it again; the exporter sends the body as it stands.
public final class SpanBatch: @unchecked Sendable {
    // One thread at a time writes a batch (its worker, then the exporter's): its fields
    // are not checked for exclusivity at run time.
    /// The spans written so far.
    @exclusivity(unchecked) public private(set) var count = 0
    /// When it was opened (monotonic seconds).
    @exclusivity(unchecked) public private(set) var opened: Double
    @exclusivity(unchecked) private var out: ByteWriter

    /// An empty batch of the service `serviceName`, made by serializerd `version`.
    public init(serviceName: String, version: String, opened: Double = 0, capacity: Int = 4096) {
        self.opened = opened
        out = ByteWriter(capacity: capacity)
        writeHead(serviceName: serviceName, version: version)
    }

    /// The batch emptied, to be written again: its room is kept.
    func reopen(serviceName: String, version: String, opened: Double) {
        self.opened = opened
        count = 0
        out.removeAll()
        writeHead(serviceName: serviceName, version: version)
    }

    private func writeHead(serviceName: String, version: String) {
        out.raw(#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"#)
        out.string(serviceName)
        out.raw(#"}}]},"scopeSpans":[{"scope":{"name":"serializerd","version":"#)
        out.string(version)
        out.raw(#"},"spans":["#)
    }

    deinit { out.release() }

    /// The whole body; no span may be written after it.
    public func withBody<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        out.raw("]}]}]}")
        return out.withBytes(body)
    }

    /// The whole body, as a copy; no span may be written after it.
    func body() -> [UInt8] { withBody { Array($0) } }

    /// One span of the trace `trace`; `parent` 0 for none. Its name is `name`, or `name` +
    /// " " + `suffix`.
    public func span(_ trace: TraceID, _ name: String, _ suffix: String? = nil, kind: SpanKind, id: UInt64, parent: UInt64,
                     start: UInt64, end: UInt64, traceState: String? = nil, events: [SpanEvent] = [], error: String? = nil,
                     attributes: (inout SpanAttributes) -> Void = { _ in }) {
        var out = self.out
        defer { self.out = out }
        out.raw(count == 0 ? #"{"traceId":""# : #",{"traceId":""#)
        count += 1
        out.hex(trace.high)
        out.hex(trace.low)
        out.raw(#"","spanId":""#)
        out.hex(id)
        out.byte(UInt8(ascii: "\""))
        if let traceState, !traceState.isEmpty {
            out.raw(#","traceState":"#)
            out.string(traceState)
        }
        if parent != 0 {
            out.raw(#","parentSpanId":""#)
            out.hex(parent)
            out.byte(UInt8(ascii: "\""))
        }
        out.raw(#","name":"#)
        if let suffix { out.string(name, UInt8(ascii: " "), suffix) } else { out.string(name) }
        out.raw(#","kind":"#)
        out.byte(UInt8(ascii: "0") + kind.rawValue)
        out.raw(#","startTimeUnixNano":""#)
        out.decimal(start)
        out.raw(#"","endTimeUnixNano":""#)
        out.decimal(max(start, end))
        out.byte(UInt8(ascii: "\""))
        var list = SpanAttributes(out)
        attributes(&list)
        out = list.finish()
        if !events.isEmpty {
            out.raw(#","events":["#)
            for i in events.indices {
                out.raw(i == 0 ? #"{"timeUnixNano":""# : #",{"timeUnixNano":""#)
                out.decimal(events[i].time)
                out.raw(#"","name":"#)
                events[i].name.withUTF8Buffer { out.string($0) }
                var eventList = SpanAttributes(out)
                eventList.add(contentsOf: events[i].attributes)
                out = eventList.finish()
                out.byte(UInt8(ascii: "}"))
            }
            out.byte(UInt8(ascii: "]"))
        }
        if let error {
            out.raw(#","status":{"message":"#)
            out.string(error)
            out.raw(#","code":2}"#)
        }
        out.byte(UInt8(ascii: "}"))
    }
}

/// A worker's spans on their way out (its thread only): each is written into the batch
/// under way, which goes to the exporter at `TraceExporter.batchSpans` spans or once it
/// has waited `TraceExporter.interval` (the worker's tick calls `handOver`). A request
/// allocates nothing for its spans, and the exporter takes one lock a batch, not a request.
public final class SpanWriter {
    private let exporter: TraceExporter
    @exclusivity(unchecked) private var batch: SpanBatch?

    public init(exporter: TraceExporter) { self.exporter = exporter }

    /// `body` writes one span (`SpanBatch.span`) into the batch under way; when tracing is
    /// off it is not called, and the span is counted as dropped.
    public func write(_ body: (SpanBatch) -> Void) {
        guard let batch = batch ?? open() else { return exporter.countDropped(1) }
        body(batch)
        if batch.count >= TraceExporter.batchSpans {
            self.batch = nil
            exporter.submit(batch)
        }
    }

    /// The batch under way goes to the exporter if it has waited `TraceExporter.interval`
    /// since `now` (monotonic seconds), or whatever its age when `all`.
    public func handOver(now: Double, all: Bool = false) {
        guard let batch, all || now - batch.opened >= TraceExporter.interval else { return }
        self.batch = nil
        exporter.submit(batch)
    }

    private func open() -> SpanBatch? {
        batch = exporter.openBatch(now: Clock.now())
        return batch
    }
}
