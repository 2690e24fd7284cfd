import Cache
import Upstream
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

    /// Everything in a route (after `defaults:`) that changes what is sent upstream or what
    /// is made of the answer (DESIGN §3): the headers it sets (as resolved, `${VAR}`
    /// included), its cookie mode (a jar is the route's own), its TLS client identity and
    /// trust, redirects, its request serializer, its response serializer with its options,
    /// and `output`. Not its name, match, timeouts or cache policy: routes that differ only
    /// there share entries.
    static func fingerprint(_ m: [String: ConfigNode], parts: RouteParts, tls: TLSPolicy?, jar route: String?,
                            contract: RouteContract? = nil) -> String {
        func yaml(_ key: String) -> String { m[key].flatMap { try? Yams.serialize(node: $0.node) } ?? "-" }
        var text = "headers:"
        for (name, value) in parts.headers { text += "\n" + name.lowercased() + ": " + value }
        text += "\ncookies: " + (route.map { "jar " + $0 } ?? "pass")
        text += "\ntls: " + (tls?.key ?? "-")
        text += "\nfollow_redirects: \(parts.followRedirects)"
        text += "\nrequest: " + parts.requestName
        text += "\nresponse: " + yaml("response")
        text += "\noutput: " + yaml("output")
        // An enforced contract decides what is served, its schema's content included.
        if let contract, contract.mode == .enforce { text += "\ncontract: \(contract.file) \(contract.digest)" }
        return text
    }
}
