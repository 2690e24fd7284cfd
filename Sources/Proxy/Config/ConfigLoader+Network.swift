import HTTPCore
import Network

extension ConfigLoader {
    static let networkKeys = ["profile", "latency", "jitter", "down", "up", "fail_rate", "faults", "seed", "header_control", "chaos"]

    /// A route's `network:` (DESIGN §2, §3); nil when the key is absent.
    static func network(_ node: ConfigNode?) throws(ConfigError) -> NetworkSettings? {
        guard let node else { return nil }
        return try network(node, base: NetworkSettings())
    }

    /// `network:` keys over `base` (the settings a runtime change starts from, or none).
    static func network(_ node: ConfigNode, base: NetworkSettings) throws(ConfigError) -> NetworkSettings {
        let m = try node.mapping(allowed: networkKeys)
        var s = base
        if let n = m["profile"] {
            let name = try n.string()
            guard let profile = NetworkProfile(rawValue: name) else {
                throw n.error("unknown profile '\(name)' (\(NetworkProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            s = profile.settings
            s.headerControl = base.headerControl
        }
        if let n = m["latency"] { s.latency = try duration(n) }
        if let n = m["jitter"] { s.jitter = try duration(n) }
        if let n = m["down"] { s.down = try n.bytes() }
        if let n = m["up"] { s.up = try n.bytes() }
        if let n = m["fail_rate"] {
            let text = try n.string()
            guard let rate = Double(text), rate >= 0, rate <= 1 else { throw n.error("expected a rate from 0 to 1, found '\(text)'") }
            s.failRate = rate
        }
        if let n = m["faults"] { s.faults = try faults(n) }
        if let n = m["seed"] {
            let text = try n.string()
            guard let seed = UInt64(text) else { throw n.error("expected a whole number from 0 to \(UInt64.max), found '\(text)'") }
            s.seed = seed
        }
        if let n = m["header_control"] { s.headerControl = try n.bool() }
        if let n = m["chaos"] {
            var operations: [ChaosOperation] = []
            for item in try n.sequence() {
                let text = try item.string()
                do throws(NetworkSyntaxError) { operations += try ChaosOperation.parse(text) } catch {
                    throw item.error(error.description)
                }
            }
            s.chaos = operations
        }
        if s.failRate > 0 && s.faults.isEmpty { throw (m["fail_rate"] ?? node).error("fail_rate needs faults to choose from") }
        return s
    }

    /// `0`, `300ms`, `2s`.
    static func duration(_ n: ConfigNode) throws(ConfigError) -> Double {
        if try n.string() == "0" { return 0 }
        return try n.seconds()
    }

    /// `[reset, timeout, truncate, {status: 503}]`.
    static func faults(_ node: ConfigNode) throws(ConfigError) -> [Fault] {
        var faults: [Fault] = []
        for item in try node.sequence() {
            if let m = try? item.mapping(allowed: ["status"]) {
                guard let status = m["status"] else { throw item.error("a status fault is written {status: 503}") }
                faults.append(.status(try status.int(in: Fault.statuses)))
                continue
            }
            switch try item.string() {
            case "reset": faults.append(.reset)
            case "timeout": faults.append(.timeout)
            case "truncate": faults.append(.truncate)
            case let other: throw item.error("unknown fault '\(other)' (reset, timeout, truncate, {status: N})")
            }
        }
        return faults
    }
}
