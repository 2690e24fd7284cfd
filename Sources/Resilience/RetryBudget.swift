/// A route's retry budget (DESIGN §11): retries stay under `percent` of its requests over the
/// last `windowSeconds`, or else at most `floorPerSecond` in the current second, so a quiet
/// route can still retry. Counted in one-second buckets. A value: the caller keeps it under its
/// own lock and passes the time in seconds (a monotonic clock).
public struct RetryBudget: Sendable, Equatable {
    public let percent: Double
    public let floorPerSecond: Double
    public static let windowSeconds = 10
    private var requests = [Int](repeating: 0, count: windowSeconds)
    private var retries = [Int](repeating: 0, count: windowSeconds)
    /// The second the newest bucket counts.
    private var second = Int.min

    public init(percent: Double, floorPerSecond: Double = 3) {
        precondition(percent >= 0 && floorPerSecond >= 0)
        self.percent = percent
        self.floorPerSecond = floorPerSecond
    }

    /// Moves the window to `now`, emptying the buckets of seconds that passed.
    private mutating func advance(_ now: Double) {
        let current = Int(now.rounded(.down))
        guard current != second else { return }
        if second == .min || current - second >= Self.windowSeconds || current < second {
            for k in 0..<Self.windowSeconds { requests[k] = 0; retries[k] = 0 }
        } else {
            for s in (second + 1)...current {
                let k = Self.bucket(s)
                requests[k] = 0
                retries[k] = 0
            }
        }
        second = current
    }

    private static func bucket(_ second: Int) -> Int { ((second % windowSeconds) + windowSeconds) % windowSeconds }

    /// A request sent for the first time.
    public mutating func request(now: Double) {
        advance(now)
        requests[Self.bucket(second)] += 1
    }

    /// Whether one more retry fits; when it does, it is counted.
    public mutating func spend(now: Double) -> Bool {
        advance(now)
        let k = Self.bucket(second)
        let withinShare = Double(retries.reduce(0, +) + 1) <= percent / 100 * Double(requests.reduce(0, +))
        guard withinShare || Double(retries[k] + 1) <= floorPerSecond else { return false }
        retries[k] += 1
        return true
    }
}
