import Synchronization

/// One counter or gauge value with a single writer (its worker) and any number of
/// readers (the scrape). Relaxed load and store, no read-modify-write: on the request
/// path a metric update is a plain memory write, no lock and no bus-locked instruction.
final class Cell: Sendable {
    private let storage = Atomic<UInt64>(0)

    @inline(__always) func add(_ n: UInt64) {
        storage.store(storage.load(ordering: .relaxed) &+ n, ordering: .relaxed)
    }

    /// For gauges and Double sums (bit patterns).
    @inline(__always) func set(_ bits: UInt64) { storage.store(bits, ordering: .relaxed) }

    @inline(__always) func addDouble(_ x: Double) {
        set((Double(bitPattern: storage.load(ordering: .relaxed)) + x).bitPattern)
    }

    var value: UInt64 { storage.load(ordering: .relaxed) }
    var doubleValue: Double { Double(bitPattern: value) }
}
