import Synchronization

/// Is a route's upstream reachable, and since when (DESIGN §6, AFNetworkReachabilityManager).
/// From what its requests see — two connect failures or timeouts in a row make it
/// unreachable, one answer reachable — and, with `health`, from an active probe: two
/// failed probes in a row make it unreachable *by probe*, and then its requests fail at
/// once. The request path reads one atomic while nothing changes.
public final class Reachability: Sendable {
    public enum State: UInt8, Sendable {
        case unknown, reachable, unreachable

        public var name: String {
            switch self {
            case .unknown: "unknown"
            case .reachable: "reachable"
            case .unreachable: "unreachable"
            }
        }
    }

    /// A change, for the log and `/-/events`: at most one a second per route; changes in
    /// between are counted in the next one's `suppressed`.
    public struct Change: Sendable {
        public let route: String
        public let from: State
        public let to: State
        /// Wall-clock seconds since the epoch.
        public let at: Double
        /// `requests` or `probe`: what saw it.
        public let by: String
        public let detail: String
        public let suppressed: Int
    }

    struct Record {
        var since: Double?
        var failures = 0
        var probeFailures = 0
        var lastEvent = -Double.infinity
        var suppressed = 0
    }

    public let route: String
    private let current = Atomic<UInt8>(State.unknown.rawValue)
    /// Passive failures in a row, mirrored here so a success costs a load when it is 0.
    private let failing = Atomic<Bool>(false)
    private let probeDown = Atomic<Bool>(false)
    private let record = Mutex(Record())
    private let notify: @Sendable (Change) -> Void

    public init(route: String, notify: @escaping @Sendable (Change) -> Void) {
        self.route = route
        self.notify = notify
    }

    public var state: State { State(rawValue: current.load(ordering: .relaxed)) ?? .unknown }
    /// When the state last changed (wall-clock seconds), nil while unknown.
    public var since: Double? { record.withLock { $0.since } }
    /// The active probe says unreachable: requests fail at once.
    public var failsFast: Bool { probeDown.load(ordering: .relaxed) }

    /// What a request saw: an answer (any status), or a connect failure or timeout.
    public func observe(answered: Bool, detail: @autoclosure () -> String, now: @autoclosure () -> Double) {
        if answered {
            guard state != .reachable || failing.load(ordering: .relaxed) else { return }
            change(now: now(), by: "requests", detail: "an answer") { record in
                record.failures = 0
                return .reachable
            }
        } else {
            let text = detail()
            change(now: now(), by: "requests", detail: text) { record in
                record.failures += 1
                return record.failures >= 2 ? .unreachable : nil
            }
        }
    }

    /// What the active probe saw: success, or a connect error, timeout or 5xx.
    public func probed(success: Bool, detail: String, now: Double) {
        change(now: now, by: "probe", detail: detail) { record in
            if success {
                record.probeFailures = 0
                record.failures = 0
                probeDown.store(false, ordering: .relaxed)
                return .reachable
            }
            record.probeFailures += 1
            guard record.probeFailures >= 2 else { return nil }
            probeDown.store(true, ordering: .relaxed)
            return .unreachable
        }
    }

    /// Applies `step` under the lock; a new state is published, an event sent unless one
    /// went less than a second ago.
    private func change(now: Double, by: String, detail: String, _ step: (inout Record) -> State?) {
        let event: Change? = record.withLock { record in
            let next = step(&record)
            failing.store(record.failures > 0, ordering: .relaxed)
            guard let next, next != state else { return nil }
            let from = state
            current.store(next.rawValue, ordering: .relaxed)
            record.since = now
            guard now - record.lastEvent >= 1 else {
                record.suppressed += 1
                return nil
            }
            record.lastEvent = now
            defer { record.suppressed = 0 }
            return Change(route: route, from: from, to: next, at: now, by: by, detail: detail, suppressed: record.suppressed)
        }
        if let event { notify(event) }
    }
}

/// Every route's reachability, by route name and upstream: a reload keeps the state of a
/// route whose upstream is unchanged.
public final class ReachabilityBoard: Sendable {
    private let cells = Mutex<[String: Reachability]>([:])
    private let listener = Mutex<(@Sendable (Reachability.Change) -> Void)?>(nil)

    public init() {}

    /// Where changes go (the server's log and event stream).
    public func listen(_ body: @escaping @Sendable (Reachability.Change) -> Void) { listener.withLock { $0 = body } }

    public func cell(route: String, upstream: String) -> Reachability {
        cells.withLock { cells in
            let key = route + " " + upstream
            if let cell = cells[key] { return cell }
            let cell = Reachability(route: route) { [weak self] change in self?.listener.withLock { $0 }?(change) }
            cells[key] = cell
            return cell
        }
    }
}
