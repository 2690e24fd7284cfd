import Serializers

/// An OpenAPI 3.1 document from learned shapes (DESIGN §10): a path per endpoint, a
/// response schema per status — the types seen, `required` for members every answer had,
/// null in the type where it occurred, `format` where every string matched one.
enum LearnedDocument {
    struct Response {
        let status: Int
        let answers: Int
        let tree: ShapeTree
    }

    static func make(title: String, endpoints: [(String, [Response])]) -> JSONValue {
        // Methods of one path share its entry; paths and statuses in a stable order.
        var paths: [(String, [(String, JSONValue)])] = []
        for (key, responses) in endpoints.sorted(by: { $0.0 < $1.0 }) {
            guard let space = key.firstIndex(of: " ") else { continue }
            let method = key[..<space].lowercased()
            let (path, parameters) = ShapeEndpoint.template(key[key.index(after: space)...])
            var operation: [(String, JSONValue)] = []
            if !parameters.isEmpty {
                operation.append(("parameters", .array(parameters.map { name in
                    .object([("name", .string(name)), ("in", .string("path")), ("required", .bool(true)),
                             ("schema", .object([("type", .string("string"))]))])
                })))
            }
            operation.append(("responses", .object(responses.sorted { $0.status < $1.status }.map { response in
                var members: [(String, JSONValue)] = [("description", .string("Learned from \(response.answers) answer\(response.answers == 1 ? "" : "s")"))]
                if response.answers > 0 {
                    members.append(("content", .object([("application/json", .object([("schema", schema(0, in: response.tree))]))])))
                }
                return (String(response.status), .object(members))
            })))
            if let k = paths.firstIndex(where: { $0.0 == path }) {
                paths[k].1.append((method, .object(operation)))
            } else {
                paths.append((path, [(method, .object(operation))]))
            }
        }
        return .object([
            ("openapi", .string("3.1.0")),
            ("info", .object([("title", .string(title)), ("version", .string("1"))])),
            ("paths", .object(paths.map { ($0.0, .object($0.1)) })),
        ])
    }

    static func schema(_ k: Int, in tree: ShapeTree) -> JSONValue {
        let node = tree.nodes[k]
        let t = node.types
        var types: [String] = []
        if t.contains(.object) { types.append("object") }
        if t.contains(.array) { types.append("array") }
        if t.contains(.string) { types.append("string") }
        if t.contains(.fraction) { types.append("number") } else if t.contains(.integer) { types.append("integer") }
        if t.contains(.boolean) { types.append("boolean") }
        if t.contains(.null) { types.append("null") }
        var members: [(String, JSONValue)] = []
        if types.count == 1 { members.append(("type", .string(types[0]))) } else if !types.isEmpty {
            members.append(("type", .array(types.map(JSONValue.string))))
        }
        if t.contains(.string), node.strings > 0, let format = ShapeFormats.name(node.formats) { members.append(("format", .string(format))) }
        if t.contains(.object) {
            var properties: [(String, JSONValue)] = []
            var required: [JSONValue] = []
            for member in tree.members(of: k) {
                let name = ShapeTree.unescaped(tree.name(of: member))
                properties.append((name, schema(member, in: tree)))
                if tree.nodes[member].seen == node.objects { required.append(.string(name)) }
            }
            if !properties.isEmpty { members.append(("properties", .object(properties))) }
            if !required.isEmpty { members.append(("required", .array(required))) }
            if node.anyID != ShapeNode.none { members.append(("additionalProperties", schema(Int(node.anyID), in: tree))) }
        }
        if t.contains(.array), node.element != ShapeNode.none { members.append(("items", schema(Int(node.element), in: tree))) }
        return .object(members)
    }
}
