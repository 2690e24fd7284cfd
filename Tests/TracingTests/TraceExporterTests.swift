import Foundation
import Synchronization
import Testing
import HTTPCore
@testable import Tracing

/// A collector in memory: takes or refuses each batch, and keeps what it took.
final class FakeSender: SpanSender {
    let bodies = Mutex<[[UInt8]]>([])
    let accepts: Atomic<Bool>
    /// How long each send takes, in microseconds.
    let delay: UInt32
    init(accepts: Bool = true, delay: UInt32 = 0) {
        self.accepts = Atomic(accepts)
        self.delay = delay
    }
    func send(_ body: UnsafeBufferPointer<UInt8>, to url: String, timeout: Double) -> Bool {
        if delay > 0 { usleep(delay) }
        guard accepts.load(ordering: .relaxed) else { return false }
        bodies.withLock { $0.append(Array(body)) }
        return true
    }
    var spanCount: Int { bodies.withLock { $0 }.reduce(0) { $0 + ((try? OTLPJSONTests.spans($1))?.count ?? 0) } }
}

func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

@Suite struct TraceExporterTests {
    static let settings = ExportSettings(url: "http://127.0.0.1:1/v1/traces", serviceName: "test")

    /// `traces` traces of `children` + 1 spans, as requests write them.
    static func write(_ writer: SpanWriter, traces: Int, children: Int = 1) {
        for _ in 0..<traces {
            // One span a write, as a request writes them.
            for k in 0..<children {
                writer.write { $0.span(OTLPJSONTests.traceID, "stage", kind: .internal, id: 0x2000 + UInt64(k), parent: 0x1111, start: 1, end: 2) }
            }
            writer.write { $0.span(OTLPJSONTests.traceID, "GET", "api", kind: .server, id: 0x1111, parent: 0, start: 1, end: 3) }
        }
    }

    static func sizes(_ sender: FakeSender) -> [Int] {
        sender.bodies.withLock { $0 }.map { (try? OTLPJSONTests.spans($0).count) ?? 0 }
    }

    @Test func aWorkersBatchGoesAtItsSizeAndEverySpanIsSentOnce() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        let writer = SpanWriter(exporter: exporter)
        // 300 traces of 2 spans: a batch at 512 spans without waiting for the rest.
        Self.write(writer, traces: 300)
        #expect(waitUntil { exporter.exported == 512 })
        // The rest is not old enough to go at the tick, and goes when the worker ends.
        writer.handOver(now: Clock.now())
        writer.handOver(now: Clock.now(), all: true)
        #expect(waitUntil { exporter.exported == 600 })
        exporter.stop()
        #expect(sender.spanCount == 600 && exporter.dropped == 0)
        #expect(Self.sizes(sender) == [512, 88])
    }

    @Test func aFullQueueDropsAndCountsAndARefusedBatchIsNotSentAgain() {
        let sender = FakeSender(accepts: false)
        let exporter = TraceExporter(sender: sender, version: "t", capacity: 10)
        let writer = SpanWriter(exporter: exporter)
        // Nowhere to send yet: nothing is kept.
        Self.write(writer, traces: 1)
        #expect(exporter.dropped == 2)
        exporter.apply(Self.settings)
        // The collector refuses what is sent: all of it dropped.
        Self.write(writer, traces: 4)
        writer.handOver(now: Clock.now(), all: true)
        #expect(waitUntil { exporter.dropped == 10 })
        // More than 10 spans cannot wait.
        Self.write(writer, traces: 6)
        writer.handOver(now: Clock.now(), all: true)
        #expect(exporter.dropped == 22)
        sender.accepts.store(true, ordering: .relaxed)
        Self.write(writer, traces: 1)
        writer.handOver(now: Clock.now(), all: true)
        #expect(waitUntil { exporter.exported == 2 })
        exporter.stop()
        #expect(exporter.dropped == 22 && sender.spanCount == 2)
    }

    @Test func stoppingSendsWhatWaits() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        let writer = SpanWriter(exporter: exporter)
        Self.write(writer, traces: 5, children: 3)
        writer.handOver(now: Clock.now(), all: true)
        exporter.stop()
        #expect(exporter.exported == 20 && sender.spanCount == 20)
        Self.write(writer, traces: 1)
        writer.handOver(now: Clock.now(), all: true)
        #expect(exporter.dropped == 2 && exporter.exported == 20)
    }
}

extension TraceExporterTests {
    /// A trickle of traces goes in one batch a second (the worker's tick), not one a trace.
    @Test func aTrickleGoesOnceASecond() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        let writer = SpanWriter(exporter: exporter)
        let start = Date()
        while Date().timeIntervalSince(start) < 2.5 {
            Self.write(writer, traces: 1)
            writer.handOver(now: Clock.now())
            usleep(20_000)
        }
        writer.handOver(now: Clock.now(), all: true)
        #expect(waitUntil { exporter.exported == UInt64(sender.spanCount) && sender.spanCount > 0 })
        exporter.stop()
        let bodies = sender.bodies.withLock { $0.count }
        #expect(bodies >= 2 && bodies <= 4, "\(bodies) batches in 2.5 s")
        #expect(exporter.dropped == 0)
    }

    /// Under steady load every batch is full, its room reused once sent, while the
    /// collector takes its time over each.
    @Test func underSteadyLoadBatchesAreFull() {
        let sender = FakeSender(delay: 20_000)
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        let writer = SpanWriter(exporter: exporter)
        // 1,500 traces of 2 spans, one about every millisecond: 3,000 spans over ~1.5 s.
        for _ in 0..<1_500 {
            Self.write(writer, traces: 1)
            writer.handOver(now: Clock.now())
            usleep(1_000)
        }
        writer.handOver(now: Clock.now(), all: true)
        #expect(waitUntil { exporter.exported == 3_000 })
        exporter.stop()
        let sizes = Self.sizes(sender)
        // Full batches of 512, and at most one partial one a second and at the end.
        #expect(sizes.count <= 3_000 / TraceExporter.batchSpans + 4, "\(sizes)")
        #expect(sizes.filter { $0 == TraceExporter.batchSpans }.count >= 3, "\(sizes)")
        #expect(sizes.reduce(0, +) == 3_000 && exporter.dropped == 0)
    }
}
