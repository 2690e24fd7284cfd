import Serializers

extension ConfigLoader {
    static func route(_ node: ConfigNode, config: ServerConfig) throws(ConfigError) -> Route {
        let m = try node.mapping(allowed: routeKeys)
        guard let nameNode = m["name"] else { throw node.error("missing required key 'name'") }
        let name = try nameNode.string()
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw nameNode.error("route names use a-z, 0-9, '_' and '-', found '\(name)'")
        }
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
        guard let upstreamNode = m["upstream"] else { throw node.error("missing required key 'upstream'") }
        let upstreamText = try upstreamNode.string()
        guard let upstream = UpstreamBase(upstreamText) else {
            throw upstreamNode.error("expected an http:// or https:// URL without query or credentials, found '\(upstreamText)'")
        }
        var headers: [(String, String)] = []
        if let headersNode = m["headers"] {
            guard case .mapping(let mapping) = headersNode.node else { throw headersNode.error("expected a mapping of header names to values") }
            for (key, value) in mapping {
                let keyNode = headersNode.child(key, key.string ?? "?")
                let field = try keyNode.string()
                guard !field.isEmpty, field.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }) else {
                    throw keyNode.error("'\(field)' is not a header name")
                }
                let text = try headersNode.child(value, field).string()
                // libcurl takes each header as one C string: a line break or NUL would split it.
                guard !text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                    throw keyNode.error("header values cannot contain line breaks or NUL")
                }
                headers.append((field, text))
            }
        }
        let requestName = try requestSerializer(m["request"])
        let requestSerializer: any RequestSerializer
        do throws(SettingsError) { requestSerializer = try RequestSerializerRegistry.make(requestName) } catch {
            throw (m["request"] ?? node).error(error.message)
        }
        let (response, responseSerializer) = try self.response(m["response"], parent: node, config: config)
        return Route(
            name: name, prefix: prefix, methods: methods, host: host, upstream: upstream,
            timeout: try m["timeout"]?.seconds() ?? config.timeouts.upstream,
            connectTimeout: config.timeouts.connect,
            followRedirects: try m["follow_redirects"]?.int(in: 0...50) ?? 5,
            headers: headers, requestSerializerName: requestName, requestSerializer: requestSerializer,
            response: response, responseSerializer: responseSerializer, output: try output(m["output"]))
    }

    static func requestSerializer(_ node: ConfigNode?) throws(ConfigError) -> String {
        guard let node else { return "passthrough" }
        let m = try node.mapping(allowed: ["serializer"])
        return try m["serializer"]?.string() ?? "passthrough"
    }

    /// The `response:` block. Key positions are checked here; values go through
    /// `ResponseSettings.apply`, the same parser `transcode --option` uses.
    static func response(_ node: ConfigNode?, parent: ConfigNode, config: ServerConfig) throws(ConfigError) -> (ResponseSettings, any ResponseSerializer) {
        var settings = ResponseSettings()
        settings.maxJSONDepth = config.limits.maxJSONDepth
        settings.maxOutput = config.limits.maxResponseBody
        var members: [String: ConfigNode] = [:]
        if let node {
            members = try node.mapping(allowed: responseKeys)
            for (key, child) in ConfigNode.inSourceOrder(members) {
                switch key {
                case "xml":
                    for (sub, value) in ConfigNode.inSourceOrder(try child.mapping(allowed: ["force_array", "namespaces"])) { try apply("xml.\(sub)", value, to: &settings) }
                    if settings.xml == nil { settings.xml = XMLOptions() }
                case "image":
                    for (sub, value) in ConfigNode.inSourceOrder(try child.mapping(allowed: ["include_data"])) { try apply("image.\(sub)", value, to: &settings) }
                    if settings.image == nil { settings.image = ImageOptions() }
                default:
                    try apply(key, child, to: &settings)
                }
            }
        }
        do throws(SettingsError) {
            return (settings, try ResponseSerializerRegistry.make(settings))
        } catch {
            // Point at the offending key when the message names one.
            let key = responseKeys.first { error.message.hasPrefix($0 + ":") } ?? "serializer"
            throw (members[key] ?? node ?? parent).error(withoutKey(error.message, key))
        }
    }

    static let listKeys: Set<String> = ["acceptable_status_codes", "acceptable_content_types", "serializers", "xml.force_array"]

    static func apply(_ key: String, _ node: ConfigNode, to settings: inout ResponseSettings) throws(ConfigError) {
        let value: String
        if node.isNull {
            value = "null"
        } else if listKeys.contains(key), case .sequence = node.node {
            value = try node.strings().joined(separator: ",")
        } else {
            value = try node.string()
        }
        do throws(SettingsError) { try settings.apply(option: "\(key)=\(value)") } catch {
            throw node.error(withoutKey(error.message, key))
        }
    }

    /// The error path already names the key; drop it from the message's front.
    static func withoutKey(_ message: String, _ key: String) -> String {
        for name in [key, String(key.split(separator: ".").last ?? "")] where message.hasPrefix(name + ": ") {
            return String(message.dropFirst(name.count + 2))
        }
        return message
    }

    static func output(_ node: ConfigNode?) throws(ConfigError) -> OutputSettings {
        var output = OutputSettings()
        guard let node else { return output }
        let m = try node.mapping(allowed: ["envelope", "canonical", "on_failure"])
        if let n = m["envelope"] { output.envelope = try n.bool() }
        if let n = m["canonical"] { output.canonical = try n.bool() }
        if let n = m["on_failure"] {
            let text = try n.string()
            guard let mode = OutputSettings.OnFailure(rawValue: text) else { throw n.error("expected problem or passthrough, found '\(text)'") }
            output.onFailure = mode
        }
        return output
    }
}
