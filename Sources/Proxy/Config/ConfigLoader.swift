import Logging
import Serializers
import Yams

/// Loads the YAML config strictly: unknown keys, wrong types, bad values, unknown
/// serializers and unset `${ENV}` references fail with `file:line:column` and the key.
public enum ConfigLoader {
    static let topKeys = ["listen", "workers", "limits", "timeouts", "admin", "log", "defaults", "routes"]
    static let routeKeys = ["name", "match", "upstream", "timeout", "follow_redirects", "headers", "request", "response", "output"]
    static let responseKeys = ["serializer", "acceptable_status_codes", "acceptable_content_types", "remove_null_values",
                               "allow_fragments", "xml", "image", "serializers"]
    static let reservedPrefixes = ["/-/", "/metrics"]

    public static func load(yaml: String, file: String, environment: [String: String]) throws(ConfigError) -> ServerConfig {
        let root: Node
        do {
            guard let composed = try Yams.compose(yaml: yaml) else {
                throw ConfigError(file: file, line: nil, column: nil, path: "", message: "the file is empty")
            }
            root = composed
        } catch let error as ConfigError {
            throw error
        } catch let error as YamlError {
            throw syntaxError(error, file: file)
        } catch {
            throw ConfigError(file: file, line: nil, column: nil, path: "", message: "\(error)")
        }
        let doc = ConfigNode(node: root, path: "", file: file, environment: environment)
        let top = try doc.mapping(allowed: topKeys)
        var config = ServerConfig()
        config.source = file
        if let node = top["listen"] {
            let text = try node.string()
            guard let address = ListenAddress(text) else { throw node.error("expected host:port such as 127.0.0.1:8080 or [::1]:8080, or unix:/absolute/path, found '\(text)'") }
            config.listen = address
        }
        if let node = top["workers"] {
            config.workers = try node.string() == "auto" ? nil : try node.int(in: 1...256)
        }
        if let node = top["limits"] { config.limits = try limits(node) }
        if let node = top["timeouts"] { config.timeouts = try timeouts(node) }
        if let node = top["admin"] {
            let admin = try node.mapping(allowed: ["allow"])
            if let allow = admin["allow"] {
                config.adminAllow = []
                for item in try allow.sequence() {
                    let text = try item.string()
                    guard let cidr = CIDR(text) else { throw item.error("expected an address or network like 127.0.0.0/8, found '\(text)'") }
                    config.adminAllow.append(cidr)
                }
            }
        }
        if let node = top["log"] { config.log = try log(node) }
        if let defaults = top["defaults"] { _ = try defaults.mapping(allowed: routeKeys.filter { $0 != "name" && $0 != "match" && $0 != "upstream" }) }
        guard let routesNode = top["routes"] else { throw doc.error("missing required key 'routes'") }
        var names: Set<String> = []
        for item in try routesNode.sequence() {
            let route = try self.route(item.merged(withDefaults: top["defaults"]?.node), config: config)
            guard names.insert(route.name).inserted else { throw item.error("route name '\(route.name)' is used twice") }
            config.routes.append(route)
        }
        return config
    }

    static func syntaxError(_ error: YamlError, file: String) -> ConfigError {
        switch error {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            return ConfigError(file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax: \(problem)")
        default:
            return ConfigError(file: file, line: nil, column: nil, path: "", message: "YAML: \(error)")
        }
    }

    static func limits(_ node: ConfigNode) throws(ConfigError) -> Limits {
        let m = try node.mapping(allowed: ["max_request_body", "max_response_body", "max_header_bytes", "max_json_depth",
                                           "max_connections", "max_buffered_bytes"])
        var limits = Limits()
        if let n = m["max_request_body"] { limits.maxRequestBody = try n.bytes() }
        if let n = m["max_response_body"] { limits.maxResponseBody = try n.bytes() }
        if let n = m["max_header_bytes"] { limits.maxHeaderBytes = try n.bytes() }
        if let n = m["max_json_depth"] { limits.maxJSONDepth = try n.int(in: 1...10_000) }
        if let n = m["max_connections"] { limits.maxConnections = try n.int(in: 1...1_000_000) }
        if let n = m["max_buffered_bytes"] { limits.maxBufferedBytes = try n.bytes() }
        return limits
    }

    static func timeouts(_ node: ConfigNode) throws(ConfigError) -> Timeouts {
        let m = try node.mapping(allowed: ["upstream", "connect", "client_idle", "shutdown_grace"])
        var t = Timeouts()
        if let n = m["upstream"] { t.upstream = try n.seconds() }
        if let n = m["connect"] { t.connect = try n.seconds() }
        if let n = m["client_idle"] { t.clientIdle = try n.seconds() }
        if let n = m["shutdown_grace"] { t.shutdownGrace = try n.seconds() }
        return t
    }

    static func log(_ node: ConfigNode) throws(ConfigError) -> LogSettings {
        let m = try node.mapping(allowed: ["format", "level"])
        var settings = LogSettings()
        if let n = m["format"] {
            let text = try n.string()
            guard let format = LogSettings.Format(rawValue: text) else { throw n.error("expected json or text, found '\(text)'") }
            settings.format = format
        }
        if let n = m["level"] {
            let text = try n.string()
            guard let level = Logger.Level(rawValue: text) else {
                throw n.error("expected one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text)'")
            }
            settings.level = level
        }
        return settings
    }
}
