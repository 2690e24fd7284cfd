import Telemetry
import HTTPCore
import Logging
import Serializers
import Yams

/// Loads the YAML config strictly: unknown keys, wrong types, bad values, unknown
/// serializers and unset `${ENV}` references fail with `file:line:column` and the key.
public enum ConfigLoader {
    static let topKeys = ["listen", "workers", "hosts", "limits", "timeouts", "admin", "capture", "tapes", "cache", "tracing", "log", "defaults", "routes"]
    static let routeKeys = ["name", "match", "upstream", "timeout", "follow_redirects", "headers", "request", "response", "output", "tape", "mocks", "cache", "tls", "http_version", "health", "cookies", "network", "stream", "websocket", "contract", "limits", "retry", "breaker"]
    static let responseKeys = ["serializer", "acceptable_status_codes", "acceptable_content_types", "remove_null_values",
                               "allow_fragments", "xml", "image", "serializers"]
    static let reservedPrefixes = ["/-/", "/metrics"]

    /// The config, or every problem in the file in file order (a bad route does not hide
    /// the next one's problems). Routes take their tapes, jars and reachability from `state`.
    public static func load(yaml: String, file: String, environment: [String: String], state: ProcessState) throws(ConfigErrors) -> ServerConfig {
        let root: Node
        do {
            guard let composed = try Yams.compose(yaml: yaml) else {
                throw ConfigError(file: file, line: nil, column: nil, path: "", message: "the file is empty")
            }
            root = composed
        } catch let error as ConfigError {
            throw ConfigErrors([error])
        } catch let error as YamlError {
            throw ConfigErrors([syntaxError(error, file: file)])
        } catch {
            throw ConfigErrors([ConfigError(file: file, line: nil, column: nil, path: "", message: "\(error)")])
        }
        let diagnostics = Diagnostics()
        let doc = ConfigNode(node: root, path: "", file: file, environment: environment, diagnostics: diagnostics)
        let config = doc.attempt { () throws(ConfigError) in try read(doc, state: state) }
        guard let config, diagnostics.errors.isEmpty else { throw ConfigErrors(diagnostics.sorted) }
        return config
    }

    static func read(_ doc: ConfigNode, state: ProcessState) throws(ConfigError) -> ServerConfig {
        let top = try doc.mapping(allowed: topKeys)
        var config = ServerConfig()
        config.source = doc.file
        if let node = top["listen"], let address = node.attempt({ () throws(ConfigError) in try listen(node) }) { config.listen = address }
        if let node = top["workers"], let workers = node.attempt({ () throws(ConfigError) in
            try node.string() == "auto" ? Optional<Int>.none : try node.int(in: 1...ServerConfig.maxWorkers)
        }) {
            config.workers = workers
        }
        if let node = top["limits"], let limits = node.attempt({ () throws(ConfigError) in try limits(node) }) { config.limits = limits }
        if let node = top["timeouts"], let timeouts = node.attempt({ () throws(ConfigError) in try timeouts(node) }) { config.timeouts = timeouts }
        if let node = top["hosts"], let hosts = node.attempt({ () throws(ConfigError) in try hostNames(node) }) { config.hosts = hosts }
        if let node = top["admin"], let admin = node.attempt({ () throws(ConfigError) in try admin(node) }) {
            if let allow = admin.allow { config.adminAllow = allow }
            if let hosts = admin.hosts { config.adminHosts = hosts }
            if let keep = admin.keepFailures { config.keepFailures = keep }
        }
        if let node = top["capture"], let capture = node.attempt({ () throws(ConfigError) in try capture(node) }) { config.capture = capture }
        config.tapesDir = relative("./tapes", to: doc.file)
        if let node = top["tapes"], let dir = node.attempt({ () throws(ConfigError) in try tapesDir(node) }) { config.tapesDir = dir }
        if let node = top["cache"], let bytes = node.attempt({ () throws(ConfigError) in try cacheMaxBytes(node) }) {
            config.cacheMaxBytes = bytes
        }
        if let node = top["tracing"], let tracing = node.attempt({ () throws(ConfigError) in try tracing(node) }) {
            config.tracing = tracing
        }
        if let node = top["log"], let log = node.attempt({ () throws(ConfigError) in try log(node) }) { config.log = log }
        if let defaults = top["defaults"] { checkDefaults(defaults, config: config) }
        guard let routesNode = top["routes"] else { throw doc.error("missing required key 'routes'") }
        var names: Set<String> = []
        for item in try routesNode.sequence() {
            let merged = item.merged(withDefaults: top["defaults"]?.node)
            guard let route = self.route(merged, config: config, state: state) else { continue }
            guard names.insert(route.name).inserted else {
                item.diagnostics.record(item.error("route name '\(route.name)' is used twice"))
                continue
            }
            config.routes.append(route)
        }
        return config
    }

    static func listen(_ node: ConfigNode) throws(ConfigError) -> ListenAddress {
        let text = try node.string()
        guard let address = ListenAddress(text) else { throw node.error("expected host:port such as 127.0.0.1:8080 or [::1]:8080, or unix:/absolute/path, found '\(text)'") }
        return address
    }

    /// `admin.allow`, `admin.hosts` and `admin.keep_failures`, each when given.
    static func admin(_ node: ConfigNode) throws(ConfigError) -> (allow: [CIDR]?, hosts: [String]?, keepFailures: Bool?) {
        let admin = try node.mapping(allowed: ["allow", "hosts", "keep_failures"])
        let keepFailures = try admin["keep_failures"].map { (n) throws(ConfigError) in try n.bool() }
        let hosts = try admin["hosts"].map { (list) throws(ConfigError) in try hostNames(list) }
        guard let allow = admin["allow"] else { return (nil, hosts, keepFailures) }
        var networks: [CIDR] = []
        for item in try allow.sequence() {
            let text = try item.string()
            guard let cidr = CIDR(text) else { throw item.error("expected an address or network like 127.0.0.0/8, found '\(text)'") }
            networks.append(cidr)
        }
        return (networks, hosts, keepFailures)
    }

    /// A list of host names (`hosts`, `admin.hosts`): lowercased, without a trailing dot.
    static func hostNames(_ list: ConfigNode) throws(ConfigError) -> [String] {
        var hosts: [String] = []
        for item in try list.sequence() {
            let text = try item.string()
            guard let name = HostField.name(text), !name.isEmpty, !text.contains(":") || text.hasPrefix("[") && text.hasSuffix("]") else {
                throw item.error("expected a host name or address without a port, such as dev.example.test, found '\(text)'")
            }
            hosts.append(name)
        }
        return hosts
    }

    /// `capture:`: each list replaces its default when given (an empty list redacts none).
    static func capture(_ node: ConfigNode) throws(ConfigError) -> Redaction {
        let m = try node.mapping(allowed: ["redact_headers", "redact_query", "redact_json"])
        func names(_ key: String, _ check: (String) -> String?) throws(ConfigError) -> [String]? {
            guard let list = m[key] else { return nil }
            var names: [String] = []
            for item in try list.sequence() {
                let text = try item.string()
                if let problem = check(text) { throw item.error(problem) }
                names.append(text)
            }
            return names
        }
        let headers = try names("redact_headers") { text in
            isHeaderName(text) ? nil : "expected a header name, found '\(text)'"
        }
        let query = try names("redact_query") { $0.isEmpty ? "expected a query parameter name, found an empty one" : nil }
        let json = try names("redact_json") { text in
            Redaction.tokens(text) == nil ? "expected a JSON pointer such as /password or /user/ssn (RFC 6901; * matches any member or element), found '\(text)'" : nil
        }
        return Redaction(headers: headers ?? Redaction.defaultHeaders, query: query ?? Redaction.defaultQuery, json: json ?? [])
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
                                           "max_connections", "max_buffered_bytes", "max_active_faults"])
        var limits = Limits()
        if let n = m["max_request_body"], let v = n.attempt(n.bytes) { limits.maxRequestBody = v }
        if let n = m["max_response_body"], let v = n.attempt(n.bytes) { limits.maxResponseBody = v }
        if let n = m["max_header_bytes"], let v = n.attempt(n.bytes) { limits.maxHeaderBytes = v }
        if let n = m["max_json_depth"], let v = n.attempt({ () throws(ConfigError) in try n.int(in: 1...10_000) }) { limits.maxJSONDepth = v }
        if let n = m["max_connections"], let v = n.attempt({ () throws(ConfigError) in try n.int(in: 1...1_000_000) }) { limits.maxConnections = v }
        if let n = m["max_buffered_bytes"], let v = n.attempt(n.bytes) { limits.maxBufferedBytes = v }
        if let n = m["max_active_faults"], let v = n.attempt({ () throws(ConfigError) in try n.int(in: 0...1_000_000) }) {
            limits.maxActiveFaults = v
        }
        return limits
    }

    static func timeouts(_ node: ConfigNode) throws(ConfigError) -> Timeouts {
        let m = try node.mapping(allowed: ["upstream", "connect", "client_idle", "shutdown_grace"])
        var t = Timeouts()
        if let n = m["upstream"], let v = n.attempt(n.seconds) { t.upstream = v }
        if let n = m["connect"], let v = n.attempt(n.seconds) { t.connect = v }
        if let n = m["client_idle"], let v = n.attempt(n.seconds) { t.clientIdle = v }
        if let n = m["shutdown_grace"], let v = n.attempt(n.seconds) { t.shutdownGrace = v }
        return t
    }

    static func log(_ node: ConfigNode) throws(ConfigError) -> LogSettings {
        let m = try node.mapping(allowed: ["format", "level"])
        var settings = LogSettings()
        if let n = m["format"] {
            let text = try n.string()
            guard let format = LogSettings.Format(rawValue: text) else { throw n.error("expected auto, json or text, found '\(text)'") }
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
