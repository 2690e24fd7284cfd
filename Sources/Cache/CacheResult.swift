import HTTPCore

/// How a request met the cache: the `serializerd_cache_requests_total` result label.
public enum CacheResult: String, Sendable, CaseIterable {
    case hit, miss, stale, revalidated, collapsed, bypass
}
