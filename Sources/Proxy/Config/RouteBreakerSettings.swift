/// `breaker:` of a route (DESIGN §11): failed requests in a row within `window` that open
/// it, and how long it stays open before a probe.
public struct BreakerSettings: Sendable, Equatable {
    public var failures = 5
    public var window = 10.0
    public var open = 30.0

    static let maxFailures = 1_000
    static let maxSeconds = 3_600.0
}

extension ConfigLoader {
    static func breaker(_ node: ConfigNode?) throws(ConfigError) -> BreakerSettings? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["failures", "window", "open"])
        var settings = BreakerSettings()
        if let n = m["failures"] { settings.failures = try n.int(in: 1...BreakerSettings.maxFailures) }
        for (key, path) in [("window", \BreakerSettings.window), ("open", \BreakerSettings.open)] {
            guard let n = m[key] else { continue }
            let seconds = try n.seconds()
            guard seconds <= BreakerSettings.maxSeconds else { throw n.error("expected at most 1h, found '\(try n.string())'") }
            settings[keyPath: path] = seconds
        }
        return settings
    }
}
