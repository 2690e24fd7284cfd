import HTTPCore
import Synchronization

/// What a cache entry is found by (DESIGN §2 *Caching*): the method and the upstream URL;
/// the request fields the upstream's `Vary` names then pick one of the key's variants.
public struct CacheKey: Hashable, Sendable {
    public let method: String
    public let url: String

    public init(method: String, url: String) {
        self.method = method
        self.url = url
    }
}
