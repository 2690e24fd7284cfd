/// `breaker` (DESIGN §11): `failures` failed requests in a row within `window` seconds open
/// it; open, requests are refused at once for `open` seconds; then one request goes through
/// (half-open), and its outcome closes the breaker or opens it again. A value: the caller
/// keeps it under its own lock and passes the time in seconds (a monotonic clock).
public struct Breaker: Sendable, Equatable {
    public enum State: Int, Sendable, Equatable {
        case closed = 0, halfOpen = 1, open = 2

        public var name: String {
            switch self {
            case .closed: "closed"
            case .halfOpen: "half_open"
            case .open: "open"
            }
        }
    }

    public enum Admission: Sendable, Equatable {
        /// Send it.
        case pass
        /// Send it as the half-open probe: its outcome decides the state.
        case probe
        /// Refuse it (`circuit-open`); the breaker may let a request through after `retryAfter` seconds.
        case refuse(retryAfter: Double)
    }

    public let failures: Int
    public let window: Double
    public let openSeconds: Double
    public private(set) var state: State = .closed
    /// Failures in a row, and when the first of them came.
    private var streak = 0
    private var streakStart = 0.0
    private var openedAt = 0.0
    private var probing = false

    public init(failures: Int, window: Double, open: Double) {
        precondition(failures > 0 && window > 0 && open > 0)
        self.failures = failures
        self.window = window
        self.openSeconds = open
    }

    /// Whether a request may go to the upstream now.
    public mutating func admit(now: Double) -> Admission {
        switch state {
        case .closed:
            return .pass
        case .open:
            let left = openedAt + openSeconds - now
            if left > 0 { return .refuse(retryAfter: left) }
            state = .halfOpen
            probing = true
            return .probe
        case .halfOpen:
            if probing { return .refuse(retryAfter: 0) }
            probing = true
            return .probe
        }
    }

    /// A request's outcome (by its last attempt); `probe` when it was admitted as the probe.
    /// Returns the new state when it changed.
    @discardableResult
    public mutating func record(failed: Bool, probe: Bool = false, now: Double) -> State? {
        if probe || state == .halfOpen {
            guard probe else { return nil }   // an answer admitted before the breaker opened
            probing = false
            if failed { return open(now) }
            return close()
        }
        guard state == .closed else { return nil }
        guard failed else {
            streak = 0
            return nil
        }
        if streak == 0 || now - streakStart > window {
            streak = 0
            streakStart = now
        }
        streak += 1
        return streak >= failures ? open(now) : nil
    }

    /// A probe that never got an outcome (its client left first): the next request probes.
    public mutating func abandonProbe() { probing = false }

    private mutating func open(_ now: Double) -> State {
        state = .open
        openedAt = now
        streak = 0
        return .open
    }

    private mutating func close() -> State {
        state = .closed
        streak = 0
        return .closed
    }
}
