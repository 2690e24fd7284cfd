import HTTPCore
import Synchronization

/// What a cache entry is found by (DESIGN §3 *Caching*): the method, the upstream URL and
/// the route's fingerprint (what it sends upstream and makes of the answer, hashed); the
/// request fields the upstream's `Vary` names then pick one of the key's variants.
public struct CacheKey: Hashable, Sendable {
    public let method: String
    public let url: String
    /// `Route.cacheScope`: routes with other credentials or other output never meet.
    public let scope: UInt64

    /// The three hashed once: the shard and its table both use it, so a lookup hashes
    /// the URL once instead of once for each.
    public let digest: Int

    public init(method: String, url: String, scope: UInt64 = 0) {
        self.method = method
        self.url = url
        self.scope = scope
        var hasher = Hasher()
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(scope)
        digest = hasher.finalize()
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    public static func == (a: CacheKey, b: CacheKey) -> Bool {
        a.digest == b.digest && a.scope == b.scope && a.url == b.url && a.method == b.method
    }
}
