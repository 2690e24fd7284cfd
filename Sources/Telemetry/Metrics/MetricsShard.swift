import Synchronization

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
