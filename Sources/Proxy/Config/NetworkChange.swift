import HTTPCore
import Network
import Serializers
import Yams

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
