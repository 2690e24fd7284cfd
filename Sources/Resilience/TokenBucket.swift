/// `limits.rate` (DESIGN §11): a token bucket holding at most one period's worth of tokens
/// (a second's for `N/s`, a minute's for `N/m`), full at the start. A value: the caller
/// keeps it under its own lock and passes the time in seconds (a monotonic clock).
public struct TokenBucket: Sendable, Equatable {
    /// Tokens a second.
    public let rate: Double
    /// Most tokens held.
    public let capacity: Double
    /// Tokens now; negative while requests that reserved ahead wait for theirs.
    public private(set) var tokens: Double
    private var at: Double

    /// `count` requests per `period` seconds (1 or 60).
    public init(count: Int, period: Double, now: Double) {
        precondition(count > 0 && period > 0)
        rate = Double(count) / period
        capacity = Double(count)
        tokens = capacity
        at = now
    }

    private mutating func refill(_ now: Double) {
        guard now > at else { return }
        tokens = min(capacity, tokens + (now - at) * rate)
        at = now
    }

    /// Takes a token for a request that may wait up to `limit` seconds for it: the wait
    /// (0 when one is here now), the token then spoken for, so requests are served in the
    /// order they asked. Nil, and nothing taken, when the wait would pass `limit`.
    public mutating func reserve(now: Double, within limit: Double) -> Double? {
        refill(now)
        // (A token refilled to within rounding of whole counts as whole.)
        let wait = tokens >= 1 - 1e-9 ? 0 : (1 - tokens) / rate
        guard wait <= limit else { return nil }
        tokens -= 1
        return wait
    }
}
