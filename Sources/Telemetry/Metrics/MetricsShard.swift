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

/// Histogram buckets for every latency family: sub-millisecond (a cached upstream on
/// loopback) to multi-second (a slow API), at most 15 series per label set.
public enum LatencyBuckets {
    public static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
}

/// A histogram with one writer: per-bucket counts (made cumulative when rendered), the
/// count and the sum of observations.
final class HistogramCells: Sendable {
    let buckets: [Cell] = (0...LatencyBuckets.bounds.count).map { _ in Cell() }   // the last is +Inf
    let count = Cell()
    let sum = Cell()

    @inline(__always) func observe(_ seconds: Double) {
        var index = 0
        let bounds = LatencyBuckets.bounds
        while index < bounds.count && seconds > bounds[index] { index += 1 }
        buckets[index].add(1)
        count.add(1)
        sum.addDouble(seconds)
    }
}

struct RequestSeries: Hashable, Sendable {
    var route: String
    var method: String
    var code: Int
    var outcome: String
}

struct SerializerSeries: Hashable, Sendable {
    var route: String
    var serializer: String
}

/// Per-route cells, registered once per route per worker.
final class RouteCells: Sendable {
    let requestDuration = HistogramCells()
    let upstreamDuration = HistogramCells()
    let upstreamBytes = Cell()
    let responseBytes = Cell()
}

/// Every series one worker has written. New series are registered under the mutex (a
/// handful per route, then never again); values live in cells the worker writes
/// without locking. The scrape copies the tables under the mutex, then reads cells.
final class MetricsShard: Sendable {
    struct Tables: Sendable {
        var requests: [RequestSeries: Cell] = [:]
        var routes: [String: RouteCells] = [:]
        var serialization: [SerializerSeries: HistogramCells] = [:]
    }

    let tables = Mutex(Tables())
    let inflight = Cell()

    func register(_ series: RequestSeries) -> Cell { register(series, in: \.requests, Cell.init) }

    func register(route: String) -> RouteCells { register(route, in: \.routes, RouteCells.init) }

    func register(_ series: SerializerSeries) -> HistogramCells { register(series, in: \.serialization, HistogramCells.init) }

    private func register<Key: Hashable & Sendable, Value: Sendable>(_ key: Key, in table: WritableKeyPath<Tables, [Key: Value]>,
                                                 _ make: () -> Value) -> Value {
        tables.withLock { t in
            if let existing = t[keyPath: table][key] { return existing }
            let value = make()
            t[keyPath: table][key] = value
            return value
        }
    }
}

/// The worker's side of its shard: lookup caches only the worker touches, so a
/// request finds its cells without the shard's mutex. The metrics sink.
public final class MetricsRecorder: CompletionSink {
    let shard: MetricsShard
    private var requests: [RequestSeries: Cell] = [:]
    private var routes: [String: RouteCells] = [:]
    private var serialization: [SerializerSeries: HistogramCells] = [:]

    init(shard: MetricsShard) { self.shard = shard }

    public func record(_ event: CompletionEvent) {
        let series = RequestSeries(route: event.route, method: event.method, code: event.status, outcome: event.outcome)
        let counter = requests[series] ?? {
            let cell = shard.register(series)
            requests[series] = cell
            return cell
        }()
        counter.add(1)
        let cells = routes[event.route] ?? {
            let cells = shard.register(route: event.route)
            routes[event.route] = cells
            return cells
        }()
        cells.requestDuration.observe(event.duration)
        if let upstream = event.upstreamDuration { cells.upstreamDuration.observe(upstream) }
        cells.upstreamBytes.add(UInt64(event.bytesIn))
        cells.responseBytes.add(UInt64(event.bytesOut))
        if let serializer = event.serializer, let seconds = event.serializeDuration {
            let key = SerializerSeries(route: event.route, serializer: serializer)
            let histogram = serialization[key] ?? {
                let cells = shard.register(key)
                serialization[key] = cells
                return cells
            }()
            histogram.observe(seconds)
        }
    }

    /// The worker's in-flight count (a gauge the scrape sums over workers).
    public func setInflight(_ count: Int) { shard.inflight.set(UInt64(max(0, count))) }
}
