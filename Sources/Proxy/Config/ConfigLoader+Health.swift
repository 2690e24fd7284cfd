/// A route's `health:` (DESIGN §6): GET `url` every `interval` seconds.
public struct RouteHealth: Sendable {
    public let path: String
    public let url: String
    public let interval: Double
}

extension ConfigLoader {
    /// The shortest `health.interval`.
    static let minHealthInterval = 0.1

    static func health(_ node: ConfigNode?, upstream: UpstreamBase) throws(ConfigError) -> RouteHealth? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["path", "interval"])
        guard let pathNode = m["path"] else { throw node.error("missing required key 'path'") }
        let path = try pathNode.string()
        let url: String
        switch upstream.join(remainder: Substring(path.hasPrefix("/") ? String(path.dropFirst()) : path), query: nil) {
        case .failure(let escape): throw pathNode.error("the health path escapes the upstream's base: \(escape.description)")
        case .success(let joined): url = joined
        }
        let interval = try m["interval"]?.seconds() ?? 30
        guard interval >= minHealthInterval else { throw (m["interval"] ?? node).error("expected at least 100ms, found \(interval) s") }
        return RouteHealth(path: path, url: url, interval: interval)
    }
}
