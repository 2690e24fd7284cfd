import HTTPCore
import Serializers
import Yams
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

/// A `PUT /-/network` body: which route, its conditions, and for how long.
struct NetworkChange {
    var route: String
    var settings: NetworkSettings
    var seconds: Double

    /// The longest body taken: a change is a few hundred bytes.
    static let maxBody = 64 << 10
    static let defaultSeconds = 600.0

    /// `{"route": NAME, "network": {…the route keys…}, "expires": "10m"}`; an error names
    /// the line and column in the body. The body is checked as JSON (depth-bounded) before
    /// the YAML reader sees it.
    static func parse(_ body: [UInt8], routeNames: Set<String>) throws(ConfigError) -> NetworkChange {
        let file = "request body"
        func failure(_ message: String) -> ConfigError { ConfigError(file: file, line: nil, column: nil, path: "", message: message) }
        guard body.count <= maxBody else { throw failure("the body is over \(maxBody) bytes") }
        let parsed: JSONValue
        do throws(JSONError) {
            parsed = try JSONValue.parse(body, options: JSONReadOptions(allowFragments: true, maxDepth: 16))
        } catch {
            throw failure("not JSON: \(error)")
        }
        guard case .object = parsed else {
            throw failure("expected a JSON object {\"route\": NAME, \"network\": {…}, \"expires\": \"10m\"}")
        }
        let root: Node
        do {
            guard let composed = try Yams.compose(yaml: String(decoding: body, as: UTF8.self)) else { throw failure("an empty body") }
            root = composed
        } catch let error as ConfigError {
            throw error
        } catch {
            throw failure("not JSON: \(error)")
        }
        let diagnostics = Diagnostics()
        let doc = ConfigNode(node: root, path: "", file: file, environment: [:], diagnostics: diagnostics)
        let m = try doc.mapping(allowed: ["route", "network", "expires"])
        guard let routeNode = m["route"] else { throw doc.error("missing required key 'route'") }
        let route = try routeNode.string()
        guard routeNames.contains(route) else { throw routeNode.error("no route named '\(route)'; GET /-/routes lists them") }
        guard let networkNode = m["network"] else { throw doc.error("missing required key 'network'") }
        let settings = try ConfigLoader.network(networkNode, base: NetworkSettings())
        var seconds = defaultSeconds
        if let n = m["expires"] {
            seconds = try n.seconds()
            guard seconds <= NetworkOverrides.maxSeconds else { throw n.error("expected at most 24h, found \(n.node.string ?? "")") }
        }
        // Unknown keys are recorded rather than thrown (a config file reports them all).
        if let first = diagnostics.sorted.first { throw first }
        return NetworkChange(route: route, settings: settings, seconds: seconds)
    }
}
