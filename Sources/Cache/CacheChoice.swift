import HTTPCore

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
