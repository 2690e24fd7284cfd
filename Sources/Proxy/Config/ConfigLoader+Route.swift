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
        if host == nil, let reserved = reservedPrefixes.first(where: { prefix.hasPrefix($0) || $0.hasPrefix(prefix) && prefix != "/" }) {
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
                guard !text.contains("\r"), !text.contains("\n") else { throw keyNode.error("header values cannot contain line breaks") }
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
            followRedirects: try m["follow_redirects"]?.int(in: 0...50) ?? 0,
            headers: headers, requestSerializerName: requestName, requestSerializer: requestSerializer,
            response: response, responseSerializer: responseSerializer, output: try output(m["output"]))
    }

    static func requestSerializer(_ node: ConfigNode?) throws(ConfigError) -> String {
        guard let node else { return "passthrough" }
        let m = try node.mapping(allowed: ["serializer"])
        return try m["serializer"]?.string() ?? "passthrough"
    }

    static func response(_ node: ConfigNode?, parent: ConfigNode, config: ServerConfig) throws(ConfigError) -> (ResponseSettings, any ResponseSerializer) {
        var settings = ResponseSettings()
        settings.maxJSONDepth = config.limits.maxJSONDepth
        guard let node else {
            do throws(SettingsError) { return (settings, try ResponseSerializerRegistry.make(settings)) } catch { throw parent.error(error.message) }
        }
        let m = try node.mapping(allowed: responseKeys)
        if let n = m["serializer"] { settings.serializer = try n.string() }
        if let n = m["acceptable_status_codes"] {
            if n.isNull {
                settings.acceptableStatusCodes = nil
            } else {
                let items = try n.strings()
                do throws(SettingsError) { settings.acceptableStatusCodes = try StatusCodeSet(parsing: items) } catch {
                    throw n.error(error.message)
                }
            }
        }
        if let n = m["acceptable_content_types"] {
            if n.isNull {
                settings.acceptableContentTypes = .any
            } else {
                let items = try n.strings()
                do throws(SettingsError) { settings.acceptableContentTypes = .only(try ResponseSettings.mediaRanges(items)) } catch {
                    throw n.error(error.message)
                }
            }
        }
        if let n = m["remove_null_values"] { settings.removeNullValues = try n.bool() }
        if let n = m["allow_fragments"] { settings.allowFragments = try n.bool() }
        if let n = m["serializers"] { settings.serializers = try n.strings() }
        if let n = m["xml"] {
            let x = try n.mapping(allowed: ["force_array", "namespaces"])
            var options = XMLOptions()
            if let f = x["force_array"] { options.forceArray = try f.strings() }
            if let ns = x["namespaces"] {
                let text = try ns.string()
                guard let mode = XMLOptions.Namespaces(rawValue: text) else { throw ns.error("expected keep or strip, found '\(text)'") }
                options.namespaces = mode
            }
            settings.xml = options
        }
        if let n = m["image"] {
            let i = try n.mapping(allowed: ["include_data"])
            settings.image = ImageOptions(includeData: try i["include_data"]?.bool() ?? false)
        }
        do throws(SettingsError) {
            return (settings, try ResponseSerializerRegistry.make(settings))
        } catch {
            // Point at the offending key when the message names one.
            let key = responseKeys.first { error.message.hasPrefix($0 + ":") } ?? "serializer"
            var message = error.message
            if message.hasPrefix(key + ": ") { message.removeFirst(key.count + 2) }
            throw (m[key] ?? node).error(message)
        }
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
