import Cache
import Yams

extension ConfigLoader {
    /// `cache: { max_bytes }`.
    static func cacheMaxBytes(_ node: ConfigNode) throws(ConfigError) -> Int {
        let m = try node.mapping(allowed: ["max_bytes"])
        return try m["max_bytes"]?.bytes() ?? ServerConfig().cacheMaxBytes
    }

    /// A route's `cache:`; nil when absent. `cache: {}` is `policy: protocol`.
    static func cache(_ node: ConfigNode?) throws(ConfigError) -> CacheRule? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["policy", "stale_if_error", "stale_if_invalid"])
        var rule = CacheRule()
        if let n = m["policy"] {
            let text = try n.string()
            guard let policy = CachePolicy(rawValue: text) else {
                throw n.error("expected one of \(CachePolicy.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text)'")
            }
            rule.policy = policy
        }
        rule.staleIfError = try m["stale_if_error"]?.seconds()
        rule.staleIfInvalid = try m["stale_if_invalid"]?.seconds()
        return rule
    }

    /// The route's settings after `defaults:` as text: a reload keeps the cache entries of
    /// routes whose text is unchanged.
    static func fingerprint(_ node: ConfigNode) -> String {
        (try? Yams.serialize(node: node.node)) ?? ""
    }
}
