/// `limits.rate` (DESIGN §11): `count` tokens a period (a second for `N/s`, a minute for
/// `N/m`), all there at the start; a token taken comes back one period later (and 1 %
/// more, for the network's jitter between here and the upstream's counter). So no window
/// of one period ever sends more than `count` — what an upstream counting requests a
/// second, in fixed or sliding windows, allows — and an idle route holds at most one
/// period's worth. A value: the caller keeps it under its own lock and passes the time
/// in seconds (a monotonic clock).
public struct TokenBucket: Sendable, Equatable {
    /// Tokens a second, on average.
    public let rate: Double
    /// Most tokens held.
    public let capacity: Int
    /// How long a token is out.
    let term: Double
    /// When each token taken (or spoken for) was or will be used, oldest first: a ring of
    /// up to `capacity`, `head` the oldest.
    private var used: [Double] = []
    private var head = 0

    /// `count` requests per `period` seconds (1 or 60).
    public init(count: Int, period: Double) {
        precondition(count > 0 && period > 0)
        rate = Double(count) / period
        capacity = count
        term = period * 1.01
    }

    /// The reply to a request for a token.
    public enum Grant: Equatable, Sendable {
        /// Its token, after this many seconds (0: now), spoken for: requests are served in
        /// the order they asked.
        case after(Double)
        /// None within the limit, and nothing taken: the first token free is this far off.
        case refused(Double)
    }

    /// A token for a request that may wait up to `limit` seconds, used no earlier than
    /// `start` (a pause the upstream asked for ends then; `now` or later).
    public mutating func reserve(now: Double, start: Double? = nil, within limit: Double) -> Grant {
        let earliest = max(now, start ?? now)
        var at = earliest
        if used.count == capacity { at = max(at, used[head] + term) }
        // Never before a token spoken for earlier: the order of asking holds.
        if let last = used.last(in: head) { at = max(at, last) }
        let wait = at - now
        guard wait <= limit else { return .refused(wait) }
        if used.count < capacity {
            used.append(at)
        } else {
            used[head] = at
            head = (head + 1) % capacity
        }
        return .after(wait)
    }
}

extension Array where Element == Double {
    /// The newest entry of a ring whose oldest is at `head`.
    fileprivate func last(in head: Int) -> Double? {
        isEmpty ? nil : self[(head + count - 1) % count]
    }
}
