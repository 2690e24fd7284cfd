import HTTPCore

/// A route's `cache.policy` (DESIGN §2): AFNetworking's request cache policies.
public enum CachePolicy: String, Sendable, CaseIterable {
    /// RFC 9111 for a shared cache (NSURLRequestUseProtocolCachePolicy).
    case `protocol`
    /// Never answer from the cache, still store (NSURLRequestReloadIgnoringLocalCacheData).
    case reload
    /// Any stored entry, whatever its age, else load (ReturnCacheDataElseLoad).
    case preferCache = "prefer_cache"
    /// Any stored entry, never load: a miss is `cache-miss` (ReturnCacheDataDontLoad).
    case onlyCache = "only_cache"
}

extension CacheControl {
    /// The client's `no-cache` or `max-age=0`: whatever is stored must be checked first.
    var demandsValidation: Bool { noCache || maxAge.isPresent && (maxAge.value ?? 0) == 0 }
}

extension StoredResponse {
    /// Whether the upstream can be asked if it still holds (RFC 9111 §4.3.1).
    public var hasValidators: Bool { upstreamETag != nil || lastModified != nil }

    /// RFC 9111 §4.2 and §5.2.1 for a shared cache: fresh enough for the request, or stale
    /// within the request's `max-stale` where the response allows it.
    func usable(for request: CacheControl, at now: Double) -> Bool {
        if control.noCache || request.noCache { return false }
        let age = freshness.age(at: now)
        let lifetime = Double(freshness.lifetime)
        if request.maxAge.isPresent, age > Double(request.maxAge.value ?? 0) || request.maxAge.value == 0 { return false }
        if request.minFresh.isPresent, lifetime - age < Double(request.minFresh.value ?? CacheControl.maxSeconds) { return false }
        if lifetime > age { return true }
        // §4.2.4: s-maxage, must-revalidate and proxy-revalidate forbid serving it stale.
        guard !control.mustRevalidate, !control.proxyRevalidate, !control.sMaxAge.isPresent else { return false }
        if request.maxStaleAny { return true }
        if let allowed = request.maxStale.value { return age - lifetime <= Double(allowed) }
        return false
    }

    /// Whether it may stand in for a failed upstream (`window`: the route's setting, else
    /// the response's own `stale-if-error`, RFC 5861) at `now`. A response that demands
    /// revalidation never does.
    public func mayServeStale(window: Double?, responseDirective: Bool, at now: Double) -> Bool {
        guard !control.mustRevalidate, !control.proxyRevalidate else { return false }
        let allowed = window ?? (responseDirective ? control.staleIfError.value.map(Double.init) : nil)
        guard let allowed else { return false }
        return freshness.age(at: now) - Double(freshness.lifetime) <= allowed
    }
}
