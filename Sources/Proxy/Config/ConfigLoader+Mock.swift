import Serializers
import Tapes
import Yams
#if canImport(Glibc)
import Glibc
#endif

extension ConfigLoader {
    /// A route's `mocks:` (DESIGN §2): `when` + `respond`, or `map_dir`. Files are read
    /// (and directories resolved) now: a missing one is a config error naming it.
    static func mocks(_ node: ConfigNode?, config: ServerConfig) throws(ConfigError) -> [MockRule] {
        guard let node else { return [] }
        var rules: [MockRule] = []
        var failed = false
        // Each rule on its own: one `check` reports every bad rule.
        for (k, item) in try node.sequence().enumerated() {
            if let rule = item.attempt({ () throws(ConfigError) in try mock(item, index: k, config: config) }) { rules.append(rule) } else { failed = true }
        }
        if failed { throw Diagnostics.recorded }
        return rules
    }

    static func mock(_ item: ConfigNode, index k: Int, config: ServerConfig) throws(ConfigError) -> MockRule {
        let m = try item.mapping(allowed: ["name", "when", "respond", "map_dir"])
        let name = try m["name"]?.string() ?? "mock-\(k + 1)"
        if let dirNode = m["map_dir"] {
            if let extra = m["when"] ?? m["respond"] { throw extra.error("a map_dir rule has no when or respond") }
            let dir = relative(try dirNode.string(), to: item.file)
            var info = stat()
            guard stat(dir, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, let real = realpath(dir, nil) else {
                throw dirNode.error("map_dir '\(dir)' is not a directory")
            }
            defer { free(real) }
            return MockRule(name: name, kind: .mapDirectory(String(cString: real)))
        }
        guard let respondNode = m["respond"] else { throw item.error("a mock needs respond (with when) or map_dir") }
        return MockRule(name: name, kind: .respond(try when(m["when"]), try answer(respondNode, config: config)))
    }

    static func when(_ node: ConfigNode?) throws(ConfigError) -> MockRule.When {
        guard let node else { return MockRule.When(method: nil, path: nil, query: [], header: []) }
        let m = try node.mapping(allowed: ["method", "path", "query", "header"])
        let method = try m["method"]?.string()
        if let method, let n = m["method"], method.isEmpty || !method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw n.error("expected an HTTP method, found '\(method)'")
        }
        return MockRule.When(method: method, path: try m["path"]?.string(), query: try pairs(m["query"]), header: try headers(m["header"]))
    }

    static func pairs(_ node: ConfigNode?) throws(ConfigError) -> [(String, String)] {
        guard let node else { return [] }
        guard case .mapping(let mapping) = node.node else { throw node.error("expected a mapping of names to values") }
        var out: [(String, String)] = []
        for (key, value) in mapping {
            let name = try node.child(key, key.string ?? "?").string()
            out.append((name, try node.child(value, name).string()))
        }
        return out
    }

    static func answer(_ node: ConfigNode, config: ServerConfig) throws(ConfigError) -> MockAnswer {
        let m = try node.mapping(allowed: ["status", "headers", "body", "json", "file"])
        let status = try m["status"]?.int(in: 100...999) ?? 200
        var headers = HeaderFields(try self.headers(m["headers"]))
        let given = ["body", "json", "file"].filter { m[$0] != nil }
        guard given.count <= 1 else { throw node.error("respond takes one of body, json and file, found \(given.joined(separator: " and "))") }
        var body: [UInt8] = []
        if let n = m["body"] { body = Array(try n.string().utf8) }
        if let n = m["json"] {
            body = NormalizedJSON(try jsonValue(n)).bytes
            if headers.first("Content-Type") == nil { headers.append("Content-Type", "application/json") }
        }
        if let n = m["file"] {
            let path = relative(try n.string(), to: node.file)
            let read: [UInt8]?
            do throws(HARError) { read = try MockFile.read(path, limit: config.limits.maxResponseBody) } catch {
                throw n.error("the mock file cannot be used: \(error.message)")
            }
            guard let read else { throw n.error("the mock file '\(path)' does not exist") }
            body = read
        }
        return MockAnswer(status: status, headers: headers, body: body)
    }

    /// A YAML value as JSON: plain scalars that read as null, booleans or JSON numbers
    /// are those; everything else is a string.
    static func jsonValue(_ node: ConfigNode) throws(ConfigError) -> JSONValue {
        switch node.node {
        case .mapping(let mapping):
            var members: [(String, JSONValue)] = []
            for (key, value) in mapping {
                let name = try node.child(key, key.string ?? "?").string()
                members.append((name, try jsonValue(node.child(value, name))))
            }
            return .object(members)
        case .sequence(let sequence):
            var items: [JSONValue] = []
            for (k, value) in sequence.enumerated() { items.append(try jsonValue(node.child(value, "[\(k)]"))) }
            return .array(items)
        case .scalar(let scalar):
            let text = try node.substitute(scalar.string)
            guard scalar.style == .plain else { return .string(text) }
            if node.isNull { return .null }
            if text == "true" || text == "false" { return .bool(text == "true") }
            if case .number? = try? JSONValue.parse(text, options: JSONReadOptions(allowFragments: true)) { return .number(text) }
            return .string(text)
        default:
            throw node.error("expected a JSON value")
        }
    }
}
