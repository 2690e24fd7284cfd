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

/// How a request met the cache: the `serializerd_cache_requests_total` result label.
public enum CacheResult: String, Sendable, CaseIterable {
    case hit, miss, stale, revalidated, collapsed, bypass
}

/// What the cache does with one request, before the upstream is asked.
public enum CacheChoice: Sendable {
    /// Answer with this entry; no upstream request.
    case hit(StoredResponse)
    /// Ask the upstream whether this entry still holds (a conditional request).
    case revalidate(StoredResponse)
    /// Ask the upstream. `fwd` is the Cache-Status `fwd` value; `stale` an entry that may
    /// still stand in on error; `store` whether the answer may be kept.
    case forward(fwd: String, result: CacheResult, stale: StoredResponse?, store: Bool)
    /// The request may not go upstream and nothing usable is stored (`cache-miss`).
    case unsatisfiable(fwd: String)

    /// RFC 9111 §4 for `protocol`, AF's meaning for the others; the client's own
    /// `no-store`, `no-cache`, `max-age`, `max-stale`, `min-fresh` and `only-if-cached`
    /// honoured. `keyKnown`: the URL has entries, if none for this request's variant.
    public static func of(policy: CachePolicy, method: String, request: CacheControl, stored: StoredResponse?,
                          keyKnown: Bool, now: Double) -> CacheChoice {
        guard HTTPMethod.isCacheable(method) else { return .forward(fwd: "method", result: .bypass, stale: nil, store: false) }
        if request.noStore { return .forward(fwd: "request", result: .bypass, stale: nil, store: false) }
        if policy == .reload { return .forward(fwd: "bypass", result: .bypass, stale: nil, store: true) }
        let cachedOnly = policy == .onlyCache || request.onlyIfCached
        guard let stored else {
            let fwd = keyKnown ? "miss" : "uri-miss"
            return cachedOnly ? .unsatisfiable(fwd: fwd) : .forward(fwd: fwd, result: .miss, stale: nil, store: true)
        }
        if policy == .onlyCache { return .hit(stored) }
        let usable = policy == .preferCache ? !request.demandsValidation : stored.usable(for: request, at: now)
        if usable { return .hit(stored) }
        if cachedOnly { return .unsatisfiable(fwd: "stale") }
        return stored.hasValidators ? .revalidate(stored) : .forward(fwd: "stale", result: .miss, stale: stored, store: true)
    }
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
