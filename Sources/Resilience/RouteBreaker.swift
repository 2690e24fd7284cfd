import Synchronization

/// A route's `breaker` across every worker (DESIGN §11), kept across reloads by route name
/// while its settings stay: the state machine under a lock, its state readable without one,
/// and each change told to `changed` (outside the lock).
public final class RouteBreaker: Sendable {
    public let failures: Int
    public let window: Double
    public let openSeconds: Double
    private let breaker: Mutex<Breaker>
    private let current = Atomic<Int>(Breaker.State.closed.rawValue)
    private let changed: @Sendable (_ from: Breaker.State, _ to: Breaker.State) -> Void

    public init(failures: Int, window: Double, open: Double,
                changed: @escaping @Sendable (_ from: Breaker.State, _ to: Breaker.State) -> Void = { _, _ in }) {
        self.failures = failures
        self.window = window
        openSeconds = open
        breaker = Mutex(Breaker(failures: failures, window: window, open: open))
        self.changed = changed
    }

    public var state: Breaker.State { Breaker.State(rawValue: current.load(ordering: .relaxed)) ?? .closed }

    /// Whether a request may go to the upstream now (`Breaker.admit`).
    public func admit(now: Double) -> Breaker.Admission {
        // Closed, the common case, needs no lock.
        if state == .closed { return .pass }
        let (admission, change) = breaker.withLock { b -> (Breaker.Admission, (Breaker.State, Breaker.State)?) in
            let before = b.state
            let admission = b.admit(now: now)
            return (admission, b.state == before ? nil : (before, b.state))
        }
        if let change { note(change) }
        return admission
    }

    /// A request's outcome, by its last attempt (`Breaker.record`).
    public func record(failed: Bool, probe: Bool, now: Double) {
        let change = breaker.withLock { b -> (Breaker.State, Breaker.State)? in
            let before = b.state
            guard let after = b.record(failed: failed, probe: probe, now: now), after != before else { return nil }
            return (before, after)
        }
        if let change { note(change) }
    }

    /// A probe that ended without an outcome (its client left, a cache answered): the next
    /// request probes.
    public func abandonProbe() { breaker.withLock { $0.abandonProbe() } }

    private func note(_ change: (Breaker.State, Breaker.State)) {
        current.store(change.1.rawValue, ordering: .relaxed)
        changed(change.0, change.1)
    }
}
