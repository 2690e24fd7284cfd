import Synchronization

/// Misses in flight, process-wide: the first request for a key asks the upstream, those
/// that follow wait for its answer (DESIGN §2: concurrent misses make one upstream
/// request). A follower is told through its own worker's mailbox, so it resumes on the
/// thread that owns its connection.
public final class MissTable: Sendable {
    private let pending = Mutex<[CacheKey: [@Sendable () -> Void]]>([:])

    public init() {}

    /// True: the caller leads and must call `finish(key)` once the answer is stored (or
    /// not). False: `wake` runs (on the leader's thread) when it does.
    public func join(_ key: CacheKey, wake: @escaping @Sendable () -> Void) -> Bool {
        pending.withLock { table in
            if table[key] != nil {
                table[key]!.append(wake)
                return false
            }
            table[key] = []
            return true
        }
    }

    /// Claims `key` if no miss for it is in flight; no waiting.
    public func lead(_ key: CacheKey) -> Bool {
        pending.withLock { table in
            guard table[key] == nil else { return false }
            table[key] = []
            return true
        }
    }

    /// The leader's answer is in: every follower is woken.
    public func finish(_ key: CacheKey) {
        let waiting = pending.withLock { $0.removeValue(forKey: key) } ?? []
        for wake in waiting { wake() }
    }

    /// Keys with a miss in flight (tests, `/-/cache`).
    public var inFlight: Int { pending.withLock { $0.count } }
}

/// The process's response cache and its misses in flight: one of each, every worker's.
public final class ProcessCache: Sendable {
    public let store: ResponseCache
    public let misses = MissTable()

    public init(maxBytes: Int) { store = ResponseCache(maxBytes: maxBytes) }
}
