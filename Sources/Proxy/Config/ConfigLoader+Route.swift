import Cache
import Network
import Upstream
import Telemetry
import Serializers

extension ConfigLoader {
    /// One route, or nil after recording its problems — each part is read on its own, so
    /// one run reports every mistake in it.
    static func route(_ node: ConfigNode, config: ServerConfig, state: ProcessState) -> Route? {
        guard let m = node.attempt({ () throws(ConfigError) in try node.mapping(allowed: routeKeys) }) else { return nil }
        let name = node.attempt { () throws(ConfigError) in try routeName(m, node) }
        let match = node.attempt { () throws(ConfigError) in try self.match(m, node) }
        let upstream = node.attempt { () throws(ConfigError) in try self.upstream(m, node) }
        let parts = routeParts(m, node, config: config)
        guard let name, let match, let upstream, let parts else { return nil }
        let tapeSetting: RouteTape?? = node.attempt { () throws(ConfigError) in try self.tape(m, route: name, config: config, store: state.tapes) }
        guard let tape = tapeSetting else { return nil }
        guard let mocks = node.attempt({ () throws(ConfigError) in try self.mocks(m["mocks"], config: config) }) else { return nil }
        let cacheSetting: CacheRule?? = node.attempt { () throws(ConfigError) in try self.cache(m["cache"]) }
        guard let cache = cacheSetting else { return nil }
        let tlsSetting: TLSPolicy?? = node.attempt { () throws(ConfigError) in try self.tls(m["tls"]) }
        guard let tls = tlsSetting else { return nil }
        let healthSetting: RouteHealth?? = node.attempt { () throws(ConfigError) in try self.health(m["health"], upstream: upstream) }
        guard let health = healthSetting else { return nil }
        let networkSetting: NetworkSettings?? = node.attempt { () throws(ConfigError) in try self.network(m["network"]) }
        guard let network = networkSetting else { return nil }
        guard var stream = node.attempt({ () throws(ConfigError) in try self.stream(m["stream"]) }) else { return nil }
        guard let websocket = node.attempt({ () throws(ConfigError) in try self.websocket(m["websocket"]) }) else { return nil }
        stream.maxMessage = websocket.maxMessage
        let contractSetting: RouteContract?? = node.attempt { () throws(ConfigError) in try self.contract(m["contract"]) }
        guard var contract = contractSetting else { return nil }
        if contract?.driftAfter != nil { contract?.shapes = state.shapes.shapes(route: name) }
        let limitsSetting: RouteLimits?? = node.attempt { () throws(ConfigError) in try self.routeLimits(m["limits"]) }
        guard let limits = limitsSetting else { return nil }
        let retrySetting: RouteRetry?? = node.attempt { () throws(ConfigError) in try self.routeRetry(m["retry"]) }
        guard let retry = retrySetting else { return nil }
        let breakerSetting: BreakerSettings?? = node.attempt { () throws(ConfigError) in try self.breaker(m["breaker"]) }
        guard let breaker = breakerSetting else { return nil }
        let jarSetting: CookieJar?? = node.attempt { () throws(ConfigError) -> CookieJar? in
            guard let n = m["cookies"] else { return nil }
            switch try n.string() {
            case "pass": return nil
            case "jar":
                guard let jar = state.cookieJars.jar(route: name) else { throw n.error("the cookie jar could not be made (libcurl share)") }
                return jar
            case let other: throw n.error("expected pass or jar, found '\(other)'")
            }
        }
        guard let jar = jarSetting else { return nil }
        guard let httpVersion = node.attempt({ () throws(ConfigError) -> UpstreamRequest.HTTPVersionSetting in
            guard let n = m["http_version"] else { return .auto }
            let text = try n.string()
            guard let setting = UpstreamRequest.HTTPVersionSetting(rawValue: text) else { throw n.error("expected auto, 1.1 or 2, found '\(text)'") }
            return setting
        }) else { return nil }
        return Route(
            name: name, prefix: match.prefix, methods: match.methods, host: match.host, upstream: upstream,
            timeout: parts.timeout, connectTimeout: config.timeouts.connect, followRedirects: parts.followRedirects,
            headers: parts.headers, requestSerializerName: parts.requestName, requestSerializer: parts.requestSerializer,
            response: parts.response, responseSerializer: parts.responseSerializer, output: parts.output, tape: tape, mocks: mocks,
            cache: cache, tls: tls, httpVersion: httpVersion, health: health, network: network, stream: stream, websocket: websocket,
            contract: contract, limits: limits, gate: state.gates.gate(route: name, limits),
            throttle: state.gates.throttle(route: name, limits), retry: retry, retries: state.gates.ledger(route: name, retry),
            breaker: state.gates.breaker(route: name, breaker),
            reachability: state.reachability.cell(route: name, upstream: upstream.description), cookies: jar,
            fingerprint: fingerprint(m, parts: parts, tls: tls, jar: jar.map { _ in name }, contract: contract))
    }

    /// What a route and `defaults:` share: everything but name, match and upstream.
    struct RouteParts {
        var timeout: Double
        var followRedirects: Int
        var headers: [(String, String)]
        var requestName: String
        var requestSerializer: any RequestSerializer
        var response: ResponseSettings
        var responseSerializer: any ResponseSerializer
        var output: OutputSettings
    }

    static func routeParts(_ m: [String: ConfigNode], _ node: ConfigNode, config: ServerConfig) -> RouteParts? {
        let timeout = node.attempt { () throws(ConfigError) in try m["timeout"]?.seconds() ?? config.timeouts.upstream }
        let follow = node.attempt { () throws(ConfigError) in try m["follow_redirects"]?.int(in: 0...50) ?? 5 }
        let headers = node.attempt { () throws(ConfigError) in try self.headers(m["headers"]) }
        let request = node.attempt { () throws(ConfigError) -> (String, any RequestSerializer) in
            let name = try requestSerializer(m["request"])
            do throws(SettingsError) { return (name, try RequestSerializerRegistry.make(name)) } catch {
                throw (m["request"] ?? node).error(error.message)
            }
        }
        let output = node.attempt { () throws(ConfigError) in try self.output(m["output"]) }
        let notesNumbers = output?.effectiveNumbers.looksAtNumbers ?? true
        let response = node.attempt { () throws(ConfigError) in
            try self.response(m["response"], parent: node, config: config, notesNumbers: notesNumbers)
        }
        guard let timeout, let follow, let headers, let request, let response, let output else { return nil }
        return RouteParts(timeout: timeout, followRedirects: follow, headers: headers, requestName: request.0,
                          requestSerializer: request.1, response: response.0, responseSerializer: response.1, output: output)
    }

    /// `defaults:` on its own, so a bad value there is reported once, as `defaults.…` at
    /// its own line (the routes it merges into then repeat nothing). A response block is
    /// checked value by value: which serializer its options belong to is each route's.
    static func checkDefaults(_ node: ConfigNode, config: ServerConfig) {
        guard let m = node.attempt({ () throws(ConfigError) in
            try node.mapping(allowed: routeKeys.filter { $0 != "name" && $0 != "match" && $0 != "upstream" })
        }) else { return }
        var shared = m
        if let response = m["response"] {
            _ = response.attempt { () throws(ConfigError) in try responseSettings(response, config: config) }
            shared["response"] = nil
        }
        _ = routeParts(shared, node, config: config)
    }

    static func routeName(_ m: [String: ConfigNode], _ node: ConfigNode) throws(ConfigError) -> String {
        guard let nameNode = m["name"] else { throw node.error("missing required key 'name'") }
        let name = try nameNode.string()
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw nameNode.error("route names use a-z, 0-9, '_' and '-', found '\(name)'")
        }
        return name
    }

    static func match(_ m: [String: ConfigNode], _ node: ConfigNode) throws(ConfigError) -> (prefix: String, methods: Set<String>?, host: String?) {
        guard let matchNode = m["match"] else { throw node.error("missing required key 'match'") }
        let match = try matchNode.mapping(allowed: ["prefix", "methods", "host"])
        guard let prefixNode = match["prefix"] else { throw matchNode.error("missing required key 'prefix'") }
        let prefix = try prefixNode.string()
        guard prefix.hasPrefix("/") else { throw prefixNode.error("a prefix starts with '/', found '\(prefix)'") }
        var host: String?
        if let hostNode = match["host"] { host = try hostNode.string().lowercased() }
        // Admin paths are matched before routes, so only prefixes inside them are unreachable.
        if host == nil, let reserved = reservedPrefixes.first(where: { prefix.hasPrefix($0) }) {
            throw prefixNode.error("'\(prefix)' overlaps the reserved admin path \(reserved)")
        }
        var methods: Set<String>?
        if let methodsNode = match["methods"] {
            var set: Set<String> = []
            for item in try methodsNode.sequence() {
                let method = try item.string()
                guard !method.isEmpty, method.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                    throw item.error("expected an upper-case HTTP method such as GET, found '\(method)'")
                }
                set.insert(method)
            }
            guard !set.isEmpty else { throw methodsNode.error("an empty list allows nothing; leave the key out to allow all methods") }
            methods = set
        }
        return (prefix, methods, host)
    }

    static func upstream(_ m: [String: ConfigNode], _ node: ConfigNode) throws(ConfigError) -> UpstreamBase {
        guard let upstreamNode = m["upstream"] else { throw node.error("missing required key 'upstream'") }
        let upstreamText = try upstreamNode.string()
        guard let upstream = UpstreamBase(upstreamText) else {
            throw upstreamNode.error("expected an http:// or https:// URL without query or credentials, found '\(Redaction().url(upstreamText))'")
        }
        return upstream
    }

    /// What a config may name as a header: letters, digits, `-` and `_`.
    static func isHeaderName(_ field: String) -> Bool {
        !field.isEmpty && field.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }
    }

    static func headers(_ headersNode: ConfigNode?) throws(ConfigError) -> [(String, String)] {
        guard let headersNode else { return [] }
        var headers: [(String, String)] = []
        guard case .mapping(let mapping) = headersNode.node else { throw headersNode.error("expected a mapping of header names to values") }
        for (key, value) in mapping {
            let keyNode = headersNode.child(key, key.string ?? "?")
            let field = try keyNode.string()
            guard isHeaderName(field) else {
                throw keyNode.error("'\(field)' is not a header name")
            }
            let text = try headersNode.child(value, field).string()
            // libcurl takes each header as one C string: a line break or NUL would split it.
            guard !text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw keyNode.error("header values cannot contain line breaks or NUL")
            }
            headers.append((field, text))
        }
        return headers
    }

    static func requestSerializer(_ node: ConfigNode?) throws(ConfigError) -> String {
        guard let node else { return "passthrough" }
        let m = try node.mapping(allowed: ["serializer"])
        return try m["serializer"]?.string() ?? "passthrough"
    }

    /// The `response:` block. Key positions are checked here; values go through
    /// `ResponseSettings.apply`, the same parser `transcode --option` uses.
    /// `notesNumbers`: whether `output.numbers` looks at numbers (not for `keep`).
    static func response(_ node: ConfigNode?, parent: ConfigNode, config: ServerConfig,
                         notesNumbers: Bool = true) throws(ConfigError) -> (ResponseSettings, any ResponseSerializer) {
        var settings = ResponseSettings()
        var members: [String: ConfigNode] = [:]
        if let node {
            (settings, members) = try responseSettings(node, config: config)
        } else {
            settings.maxJSONDepth = config.limits.maxJSONDepth
            settings.maxOutput = config.limits.maxResponseBody
        }
        settings.notesNumbers = notesNumbers
        do throws(SettingsError) {
            return (settings, try ResponseSerializerRegistry.make(settings))
        } catch {
            // At the key the error names: `xml:` for an option of the wrong serializer.
            throw (members[error.key ?? "serializer"] ?? node ?? parent).error(error.reason)
        }
    }

    /// The block's values, each checked (and a problem recorded) on its own.
    static func responseSettings(_ node: ConfigNode, config: ServerConfig) throws(ConfigError) -> (ResponseSettings, [String: ConfigNode]) {
        var settings = ResponseSettings()
        settings.maxJSONDepth = config.limits.maxJSONDepth
        settings.maxOutput = config.limits.maxResponseBody
        let members = try node.mapping(allowed: responseKeys)
        var failed = false
        for (key, child) in ConfigNode.inSourceOrder(members) {
            switch key {
            case "xml", "image":
                let allowed = key == "xml" ? ["force_array", "namespaces"] : ["include_data"]
                guard let options = child.attempt({ () throws(ConfigError) in try child.mapping(allowed: allowed) }) else { failed = true; continue }
                for (sub, value) in ConfigNode.inSourceOrder(options) where value.attempt({ () throws(ConfigError) in
                    try apply("\(key).\(sub)", value, to: &settings)
                }) == nil {
                    failed = true
                }
                if key == "xml", settings.xml == nil { settings.xml = XMLOptions() }
                if key == "image", settings.image == nil { settings.image = ImageOptions() }
            default:
                if child.attempt({ () throws(ConfigError) in try apply(key, child, to: &settings) }) == nil { failed = true }
            }
        }
        // Already recorded, one by one: this only stops the serializer being built.
        if failed { throw Diagnostics.recorded }
        return (settings, members)
    }

    static func apply(_ key: String, _ node: ConfigNode, to settings: inout ResponseSettings) throws(ConfigError) {
        let value: SettingValue
        if node.isNull {
            value = .null
        } else if case .sequence = node.node {
            value = .list(try node.strings())
        } else {
            value = .scalar(try node.string())
        }
        do throws(SettingsError) { try settings.apply(key: key, value: value) } catch {
            throw node.error(error.reason)
        }
    }

    static func output(_ node: ConfigNode?) throws(ConfigError) -> OutputSettings {
        var output = OutputSettings()
        guard let node else { return output }
        let m = try node.mapping(allowed: ["envelope", "canonical", "numbers", "on_failure"])
        if let n = m["envelope"] { output.envelope = try n.bool() }
        if let n = m["canonical"] { output.canonical = try n.bool() }
        if let n = m["numbers"] {
            let text = try n.string()
            guard let mode = NumberGuard.Mode(rawValue: text) else { throw n.error("expected keep, count, string or reject, found '\(text)'") }
            // Canonical output rounds every number to a double: keeping an unsafe one
            // there would silently change its value.
            if (mode == .keep || mode == .count) && output.canonical {
                throw n.error("\(text) cannot be combined with canonical: true (canonical output would round the numbers it keeps); use string or reject")
            }
            output.numbers = mode
        }
        if let n = m["on_failure"] {
            let text = try n.string()
            guard let mode = OutputSettings.OnFailure(rawValue: text) else { throw n.error("expected problem or passthrough, found '\(text)'") }
            output.onFailure = mode
        }
        return output
    }
}
