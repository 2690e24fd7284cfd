import HTTPCore

/// A route's `cache:` resolved.
public struct CacheRule: Sendable, Equatable {
    public var policy: CachePolicy
    /// Seconds past freshness a stored entry may stand in for a failed upstream, or for an
    /// answer the route's serializer refused.
    public var staleIfError: Double?
    public var staleIfInvalid: Double?

    public init(policy: CachePolicy = .protocol, staleIfError: Double? = nil, staleIfInvalid: Double? = nil) {
        self.policy = policy
        self.staleIfError = staleIfError
        self.staleIfInvalid = staleIfInvalid
    }
}
