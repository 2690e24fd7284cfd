import Synchronization

/// A route's retries across every worker (DESIGN §11), kept across reloads by route name:
/// its budget, and the retries made by reason for `serializerd_retries_total`.
public final class RetryLedger: Sendable {
    private let budget: Mutex<RetryBudget>
    private let made = Mutex<[String: UInt64]>([:])

    public init(percent: Double) {
        budget = Mutex(RetryBudget(percent: percent))
    }

    /// A reload's `budget`: a changed share starts a fresh window.
    public func update(percent: Double) {
        budget.withLock { if $0.percent != percent { $0 = RetryBudget(percent: percent) } }
    }

    /// A request of the route sent for the first time.
    public func request(now: Double) { budget.withLock { $0.request(now: now) } }

    /// Whether one more retry fits the budget; when it does, it is counted under `reason`.
    public func spend(now: Double, reason: String) -> Bool {
        guard budget.withLock({ $0.spend(now: now) }) else { return false }
        made.withLock { $0[reason, default: 0] += 1 }
        return true
    }

    /// Retries made so far, by reason.
    public var counts: [String: UInt64] { made.withLock { $0 } }
}
