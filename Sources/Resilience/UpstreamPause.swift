/// A pause the upstream asked for (DESIGN §11: `Retry-After` on 429 or 503, `RateLimit`
/// with `r=0`, `X-RateLimit-Remaining: 0`): no request of the route is sent before
/// `until`. A later pause extends it; an earlier one never shortens it.
public struct UpstreamPause: Sendable, Equatable {
    public private(set) var until: Double = 0

    public init() {}

    /// Pauses until `until`; true when that extends the pause.
    @discardableResult
    public mutating func pause(until: Double) -> Bool {
        guard until > self.until else { return false }
        self.until = until
        return true
    }

    /// Seconds still to wait at `now` (0 when not paused).
    public func remaining(now: Double) -> Double { max(0, until - now) }
}
