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
    /// Each route's settings (as text) in the running configuration. A store and a
    /// reload's purge take this lock, so an answer made under settings a reload replaced
    /// is never stored after the purge that removed its route's entries.
    private let routes = Mutex<[String: String]>([:])

    public init(maxBytes: Int) { store = ResponseCache(maxBytes: maxBytes) }

    /// Stores `response` unless its route's settings are no longer the running ones.
    @discardableResult
    public func store(_ key: CacheKey, _ response: StoredResponse, fingerprint: String) -> Bool {
        routes.withLock { current in
            guard current[response.route] == fingerprint else { return false }
            store.store(key, response)
            return true
        }
    }

    /// The running configuration's routes (name, settings as text): entries of routes
    /// whose settings changed, or that are gone, are purged.
    public func apply(routes fresh: [(name: String, fingerprint: String)]) {
        routes.withLock { current in
            let next = Dictionary(fresh.map { ($0.name, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
            for (name, fingerprint) in current where next[name] != fingerprint { store.purge(route: name) }
            current = next
        }
    }
}
