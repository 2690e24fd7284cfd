import Resilience
import Synchronization

/// `limits:` of a route (DESIGN §11): its upstream requests in flight across all workers,
/// and the FIFO queue of those that wait for a slot.
public struct RouteLimits: Sendable, Equatable {
    public var concurrency: Int
    /// Requests waiting beyond `concurrency`; one more is `overloaded`.
    public var queue = 256
    /// The longest a request waits in the queue (not counted in the route timeout).
    public var queueTimeout = 5.0

    static let maxConcurrency = 100_000
    static let maxQueue = 1_000_000
    static let maxQueueTimeout = 3_600.0
}

extension ConfigLoader {
    static func routeLimits(_ node: ConfigNode?) throws(ConfigError) -> RouteLimits? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["concurrency", "queue", "queue_timeout"])
        guard let n = m["concurrency"] else {
            throw node.error("limits needs concurrency (the upstream requests in flight, all workers together)")
        }
        var limits = RouteLimits(concurrency: try n.int(in: 1...RouteLimits.maxConcurrency))
        if let n = m["queue"] { limits.queue = try n.int(in: 0...RouteLimits.maxQueue) }
        if let n = m["queue_timeout"] {
            let seconds = try n.seconds()
            guard seconds <= RouteLimits.maxQueueTimeout else { throw n.error("expected at most 1h, found '\(try n.string())'") }
            limits.queueTimeout = seconds
        }
        return limits
    }
}

/// Each route's gate by route name, kept across reloads: requests in flight and waiting
/// keep their places when the config changes.
public final class GateBoard: Sendable {
    private let gates = Mutex<[String: UpstreamGate]>([:])

    public init() {}

    func gate(route: String, _ limits: RouteLimits) -> UpstreamGate {
        let (gate, made) = gates.withLock { all -> (UpstreamGate, Bool) in
            if let found = all[route] { return (found, false) }
            let made = UpstreamGate(limit: limits.concurrency, queue: limits.queue)
            all[route] = made
            return (made, true)
        }
        if !made { gate.update(limit: limits.concurrency, queue: limits.queue) }
        return gate
    }
}
