import Synchronization

/// Network conditions set at runtime (`PUT /-/network`), by route name, each until its
/// expiry; shared by all workers and kept across reloads. A request reads one atomic
/// while none is set.
public final class NetworkOverrides: Sendable {
    public struct Entry: Sendable, Equatable {
        public var settings: NetworkSettings
        /// Wall-clock seconds.
        public var expiresAt: Double
    }

    private let table = Mutex<[String: Entry]>([:])
    private let count = Atomic<Int>(0)
    private let generation = Atomic<Int>(0)

    /// The longest a runtime change lasts.
    public static let maxSeconds = 86_400.0

    public init() {}

    /// Anything set (perhaps expired).
    public var isActive: Bool { count.load(ordering: .relaxed) > 0 }

    /// Changes with every set and removal: draws seeded from the old settings start again.
    public var version: Int { generation.load(ordering: .relaxed) }

    public func set(_ route: String, _ settings: NetworkSettings, expiresAt: Double) {
        table.withLock { table in
            table[route] = Entry(settings: settings, expiresAt: expiresAt)
            count.store(table.count, ordering: .relaxed)
        }
        generation.add(1, ordering: .relaxed)
    }

    /// Removes one route's change, or all; how many were removed.
    @discardableResult
    public func remove(_ route: String?) -> Int {
        let removed = table.withLock { table in
            let before = table.count
            if let route { table[route] = nil } else { table.removeAll() }
            count.store(table.count, ordering: .relaxed)
            return before - table.count
        }
        if removed > 0 { generation.add(1, ordering: .relaxed) }
        return removed
    }

    /// The route's change in force at `now`; expired ones are dropped here.
    public func current(_ route: String, now: Double) -> NetworkSettings? {
        guard isActive else { return nil }
        let (entry, expired) = table.withLock { table -> (Entry?, Bool) in
            guard let entry = table[route] else { return (nil, false) }
            guard entry.expiresAt > now else {
                table[route] = nil
                count.store(table.count, ordering: .relaxed)
                return (nil, true)
            }
            return (entry, false)
        }
        if expired { generation.add(1, ordering: .relaxed) }
        return entry?.settings
    }

    /// Every change in force at `now`.
    public func all(now: Double) -> [String: Entry] {
        table.withLock { $0.filter { $0.value.expiresAt > now } }
    }
}
