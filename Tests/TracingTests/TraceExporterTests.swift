import Foundation
import Synchronization
import Testing
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
    func send(_ body: [UInt8], to url: String, timeout: Double) -> Bool {
        if delay > 0 { usleep(delay) }
        guard accepts.load(ordering: .relaxed) else { return false }
        bodies.withLock { $0.append(body) }
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

    @Test func batchesGoAtTheirSizeAndEveryTraceIsSentOnce() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        // 300 traces of 2 spans: a batch at 512 spans without waiting for the second.
        for _ in 0..<300 { exporter.submit(OTLPJSONTests.trace()) }
        #expect(waitUntil { exporter.exported == 600 })
        exporter.stop()
        #expect(sender.spanCount == 600 && exporter.dropped == 0)
        let sizes = sender.bodies.withLock { $0 }.map { (try? OTLPJSONTests.spans($0).count) ?? 0 }
        #expect(sizes.allSatisfy { $0 <= TraceExporter.batchSpans }, "\(sizes)")
    }

    @Test func aFullQueueDropsAndCountsAndARefusedBatchIsNotSentAgain() {
        let sender = FakeSender(accepts: false)
        let exporter = TraceExporter(sender: sender, version: "t", capacity: 10)
        // Nowhere to send yet: nothing is kept.
        exporter.submit(OTLPJSONTests.trace())
        #expect(exporter.dropped == 2)
        exporter.apply(Self.settings)
        for _ in 0..<8 { exporter.submit(OTLPJSONTests.trace()) }
        // At most 10 spans wait; the collector refuses what is sent: all of it dropped.
        #expect(waitUntil { exporter.dropped == 18 })
        sender.accepts.store(true, ordering: .relaxed)
        exporter.submit(OTLPJSONTests.trace())
        #expect(waitUntil { exporter.exported == 2 })
        exporter.stop()
        #expect(exporter.dropped == 18 && sender.spanCount == 2)
    }

    @Test func stoppingSendsWhatWaits() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        for _ in 0..<5 { exporter.submit(OTLPJSONTests.trace(children: 3)) }
        exporter.stop()
        #expect(exporter.exported == 20 && sender.spanCount == 20)
        exporter.submit(OTLPJSONTests.trace())
        #expect(exporter.dropped == 2)
    }
}

extension TraceExporterTests {
    /// A trickle of traces goes in one batch a second, not one a trace.
    @Test func aTrickleGoesOnceASecond() {
        let sender = FakeSender()
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        let start = Date()
        while Date().timeIntervalSince(start) < 2.5 {
            exporter.submit(OTLPJSONTests.trace())
            usleep(20_000)
        }
        exporter.stop()
        let bodies = sender.bodies.withLock { $0.count }
        #expect(bodies >= 2 && bodies <= 4, "\(bodies) batches in 2.5 s")
    }

    /// Traces that keep coming while a batch is sent wait for a full batch (or the
    /// interval), not one small batch per send.
    @Test func underSteadyLoadBatchesAreFull() {
        let sender = FakeSender(delay: 20_000)
        let exporter = TraceExporter(sender: sender, version: "t")
        exporter.apply(Self.settings)
        // 1,500 traces of 2 spans, one about every millisecond: 3,000 spans over ~1.5 s.
        for _ in 0..<1_500 {
            exporter.submit(OTLPJSONTests.trace())
            usleep(1_000)
        }
        #expect(waitUntil { exporter.exported == 3_000 })
        exporter.stop()
        let sizes = sender.bodies.withLock { $0 }.map { (try? OTLPJSONTests.spans($0).count) ?? 0 }
        // Full batches of 512, and at most one partial one a second and at the end.
        #expect(sizes.count <= 3_000 / TraceExporter.batchSpans + 4, "\(sizes)")
        #expect(sizes.reduce(0, +) == 3_000 && exporter.dropped == 0)
    }
}
