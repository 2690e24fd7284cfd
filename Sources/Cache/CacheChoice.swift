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
    /// `unkeyed`: the request carries a field that could change the answer but is not in
    /// the key (`X-Forwarded-Host` and the like), so the cache neither serves nor stores it.
    /// `only_cache` (or `only-if-cached`) never goes upstream, whatever the request.
    public static func of(policy: CachePolicy, method: String, request: CacheControl, stored: StoredResponse?,
                          keyKnown: Bool, now: Double, unkeyed: Bool = false) -> CacheChoice {
        let cachedOnly = policy == .onlyCache || request.onlyIfCached
        func bypass(_ fwd: String, store: Bool = false) -> CacheChoice {
            cachedOnly ? .unsatisfiable(fwd: fwd) : .forward(fwd: fwd, result: .bypass, stale: nil, store: store)
        }
        guard HTTPMethod.isCacheable(method) else { return bypass("method") }
        if request.noStore { return bypass("request") }
        if unkeyed { return bypass("bypass") }
        if policy == .reload { return bypass("bypass", store: true) }
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
