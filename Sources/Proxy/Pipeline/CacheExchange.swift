import Cache
import EventLoop
import HTTPCore
import Serializers
import Upstream

/// One request of a caching route on its way upstream: what the cache decided before it
/// left, and what it may fall back on when the answer comes.
struct CacheExchange {
    let rule: CacheRule
    let key: CacheKey
    /// The Cache-Status `fwd` value, and the result counted when the answer is used as is.
    var fwd = "miss"
    var result = CacheResult.miss
    /// The entry being revalidated, or one that may stand in for a failed upstream.
    var stale: StoredResponse?
    var revalidating = false
    /// Whether the answer may be stored.
    var store = false
    /// Whether other requests wait for this one's answer.
    var leads = false
    /// The clock when the request left (RFC 9111 §4.2.3 `request_time`).
    let requestedAt: Double
    /// The request fields the upstream saw, by name: the route's own, else the client's.
    let selecting: (String) -> String?
    /// The settings of the route that sent it, as text.
    let fingerprint: String

    /// The request fields the storing rules read (RFC 9111 §3).
    var requestFields: HeaderFields {
        HeaderFields(["Cache-Control", "Authorization"].compactMap { name in selecting(name).map { (name, $0) } })
    }

    func status(fwdStatus: Int?, stored: Bool = false) -> String {
        var text = "serializerd; fwd=" + fwd
        if let fwdStatus { text += "; fwd-status=\(fwdStatus)" }
        if stored { text += "; stored" }
        return text
    }
}
