import Resilience
import Synchronization

/// `limits:` of a route (DESIGN §11): its upstream requests in flight across all workers,
/// the rate they may leave at, and the FIFO queue of those that wait.
public struct RouteLimits: Sendable, Equatable {
    /// Nil: unbounded.
    public var concurrency: Int?
    /// `N/s` or `N/m`: requests and the period they are counted over, in seconds.
    public var rate: Rate?
    /// Requests waiting beyond `concurrency`; one more is `overloaded`.
    public var queue = 256
    /// The longest a request waits in the queue (not counted in the route timeout).
    public var queueTimeout = 5.0

    public struct Rate: Sendable, Equatable, CustomStringConvertible {
        public let count: Int
        public let period: Double
        public var description: String { "\(count)/\(period == 60 ? "m" : "s")" }
    }

    /// A route without `limits` waits this long at most for a pause its upstream asked for.
    static let defaultQueueTimeout = 5.0
    static let maxConcurrency = 100_000
    static let maxRate = 100_000
    static let maxQueue = 1_000_000
    static let maxQueueTimeout = 3_600.0
}

extension ConfigLoader {
    static func routeLimits(_ node: ConfigNode?) throws(ConfigError) -> RouteLimits? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["concurrency", "rate", "queue", "queue_timeout"])
        guard m["concurrency"] != nil || m["rate"] != nil else {
            throw node.error("limits needs concurrency (the upstream requests in flight, all workers together) or rate (N/s or N/m)")
        }
        var limits = RouteLimits()
        if let n = m["concurrency"] { limits.concurrency = try n.int(in: 1...RouteLimits.maxConcurrency) }
        if let n = m["rate"] { limits.rate = try rate(n) }
        if let n = m["queue"] { limits.queue = try n.int(in: 0...RouteLimits.maxQueue) }
        if let n = m["queue_timeout"] {
            let seconds = try n.seconds()
            guard seconds <= RouteLimits.maxQueueTimeout else { throw n.error("expected at most 1h, found '\(try n.string())'") }
            limits.queueTimeout = seconds
        }
        return limits
    }

    /// `N/s` or `N/m`, N from 1 to 100,000.
    private static func rate(_ n: ConfigNode) throws(ConfigError) -> RouteLimits.Rate {
        let text = try n.string()
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0]), parts[1] == "s" || parts[1] == "m" else {
            throw n.error("expected a rate such as 10/s or 600/m, found '\(text)'")
        }
        guard (1...RouteLimits.maxRate).contains(count) else {
            throw n.error("expected 1 to \(RouteLimits.maxRate) requests a period, found \(count)")
        }
        return RouteLimits.Rate(count: count, period: parts[1] == "s" ? 1 : 60)
    }
}

/// Each route's gate and throttle by route name, kept across reloads: requests in flight
/// and waiting keep their places, and a pause the upstream asked for holds, when the
/// config changes.
public final class GateBoard: Sendable {
    private let gates = Mutex<[String: UpstreamGate]>([:])
    private let throttles = Mutex<[String: RouteThrottle]>([:])
    private let ledgers = Mutex<[String: RetryLedger]>([:])
    private let breakers = Mutex<[String: RouteBreaker]>([:])
    private let breakerListener = Mutex<(@Sendable (BreakerChange) -> Void)?>(nil)

    /// A route's breaker changed state (`breaker_changed`).
    public struct BreakerChange: Sendable {
        public let route: String
        public let from: Breaker.State
        public let to: Breaker.State
    }

    /// Hears every breaker change, from the thread whose request made it.
    public func listenBreakers(_ listener: @escaping @Sendable (BreakerChange) -> Void) {
        breakerListener.withLock { $0 = listener }
    }

    /// The route's breaker when `breaker` is set; a reload with other settings starts a new one.
    func breaker(route: String, _ settings: BreakerSettings?) -> RouteBreaker? {
        guard let settings else {
            breakers.withLock { _ = $0.removeValue(forKey: route) }
            return nil
        }
        return breakers.withLock { all -> RouteBreaker in
            if let found = all[route], found.failures == settings.failures, found.window == settings.window,
               found.openSeconds == settings.open { return found }
            let made = RouteBreaker(failures: settings.failures, window: settings.window, open: settings.open) { [weak self] from, to in
                let listener = self?.breakerListener.withLock { $0 }
                listener?(BreakerChange(route: route, from: from, to: to))
            }
            all[route] = made
            return made
        }
    }

    public init() {}

    /// The route's gate when `limits.concurrency` is set.
    func gate(route: String, _ limits: RouteLimits?) -> UpstreamGate? {
        guard let limits, let concurrency = limits.concurrency else { return nil }
        let (gate, made) = gates.withLock { all -> (UpstreamGate, Bool) in
            if let found = all[route] { return (found, false) }
            let made = UpstreamGate(limit: concurrency, queue: limits.queue)
            all[route] = made
            return (made, true)
        }
        if !made { gate.update(limit: concurrency, queue: limits.queue) }
        return gate
    }

    /// The route's retry ledger when `retry` is set.
    func ledger(route: String, _ retry: RouteRetry?) -> RetryLedger? {
        guard let retry else { return nil }
        let (ledger, made) = ledgers.withLock { all -> (RetryLedger, Bool) in
            if let found = all[route] { return (found, false) }
            let made = RetryLedger(percent: retry.budget)
            all[route] = made
            return (made, true)
        }
        if !made { ledger.update(percent: retry.budget) }
        return ledger
    }

    /// The route's throttle: every route has one, for the pauses its upstream asks for.
    func throttle(route: String, _ limits: RouteLimits?) -> RouteThrottle {
        let rate = limits?.rate.map { (count: $0.count, period: $0.period) }
        let (throttle, made) = throttles.withLock { all -> (RouteThrottle, Bool) in
            if let found = all[route] { return (found, false) }
            let made = RouteThrottle(rate: rate)
            all[route] = made
            return (made, true)
        }
        if !made { throttle.update(rate: rate) }
        return throttle
    }
}
