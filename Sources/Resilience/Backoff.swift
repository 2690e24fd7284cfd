/// `retry`'s waits (DESIGN §11): full-jitter exponential backoff, honouring the upstream's
/// `Retry-After`.
public enum Backoff {
    /// Before retry number `retry` (1 for the first): a uniform draw `random` in [0, 1)
    /// of `min(cap, base × 2^(retry-1))`; the upstream's `retryAfter`, when it asked for
    /// one, is waited instead when longer.
    public static func delay(retry: Int, base: Double, cap: Double, random: Double, retryAfter: Double? = nil) -> Double {
        precondition(retry >= 1 && base >= 0 && cap >= 0 && random >= 0 && random < 1)
        let ceiling = min(cap, base * Double(1 << min(retry - 1, 30)))
        let jittered = random * ceiling
        guard let retryAfter else { return jittered }
        return max(jittered, retryAfter)
    }
}
