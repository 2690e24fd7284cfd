import Serializers

/// An OpenAPI 3.0 or 3.1 document as a contract (DESIGN §10): the operation found by the
/// path after the route's prefix (templates such as `/orders/{id}`; a `servers` base path
/// is ignored) and the method, the response schema by status (then its `NXX` range, then
/// `default`), its `$ref`s within the document resolved.
public final class OpenAPIContract: Sendable {
    struct Operation: Sendable {
        /// The path template's segments; nil where a `{parameter}` takes any segment.
        let segments: [String?]
        let method: String
        /// By status key as the document writes it: `200`, `2XX`, `default`.
        let responses: [String: Schema]
    }

    let operations: [Operation]
    public let version: String

    init(operations: [Operation], version: String) {
        self.operations = operations
        self.version = version
    }

    /// The response schema for a request and its answer's status; nil when the document
    /// has none for them (no operation, no response, or one without a JSON schema).
    public func schema(path: String, method: String, status: Int) -> Schema? {
        let parts = Self.segments(path)
        let method = method.lowercased()
        // A template with more literal segments is the more specific (OpenAPI 3.1 §4.8.8).
        var best: (Operation, Int)?
        for operation in operations where operation.method == method && operation.segments.count == parts.count {
            var literals = 0
            var matches = true
            for (segment, part) in zip(operation.segments, parts) {
                guard let segment else { continue }
                guard segment == part else { matches = false; break }
                literals += 1
            }
            if matches, literals > (best?.1 ?? -1) { best = (operation, literals) }
        }
        guard let operation = best?.0 else { return nil }
        return operation.responses[String(status)] ?? operation.responses["\(status / 100)XX"] ?? operation.responses["default"]
    }

    static func segments(_ path: String) -> [String] {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        return bare.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
    }

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Compiles every operation's response schemas. `uri` names the document, for `$ref`s
    /// and messages.
    public static func compile(_ document: JSONValue, uri: String) throws(SchemaError) -> OpenAPIContract {
        let base = SchemaURI.split(uri).0
        guard case .string(let version)? = document["openapi"], version.hasPrefix("3.0") || version.hasPrefix("3.1") else {
            throw SchemaError(location: base + "#/openapi", message: "expected an OpenAPI 3.0 or 3.1 document")
        }
        guard case .object(let paths)? = document["paths"] else {
            throw SchemaError(location: base + "#/paths", message: "expected an object of paths")
        }
        var compiler = SchemaCompiler(load: { _ in nil }, dialect: version.hasPrefix("3.0") ? .openAPI30 : .openAPI31)
        compiler.documents.insert(base)
        compiler.sources[base] = document
        var found: [(segments: [String?], method: String, responses: [(String, SchemaNode)])] = []
        for (template, item) in paths {
            let itemPointer = "/paths/" + JSONPointer.escape(template)
            guard case .object(let operations) = item else {
                throw SchemaError(location: base + "#" + itemPointer, message: "expected a path item object")
            }
            for (method, operation) in operations where methods.contains(method) {
                let pointer = itemPointer + "/" + method + "/responses"
                guard case .object(let responses)? = operation["responses"] else { continue }
                var compiled: [(String, SchemaNode)] = []
                for (status, response) in responses {
                    let responsePointer = pointer + "/" + JSONPointer.escape(status)
                    guard let (schema, schemaPointer) = try jsonSchema(of: response, at: responsePointer, in: document, base: base) else { continue }
                    // Ranges as `2XX` whatever their case; `default` as it is.
                    let key = status.lowercased() == "default" ? "default" : status.uppercased()
                    compiled.append((key, try compiler.node(schema, base: base, pointer: schemaPointer, depth: 0)))
                }
                let segments = Self.segments(template).map { $0.hasPrefix("{") && $0.hasSuffix("}") ? nil : $0 }
                found.append((segments, method, compiled))
            }
        }
        try compiler.link()
        try SchemaCycles.check(compiler.nodes)
        let nodes = compiler.nodes
        let program = SchemaProgram(nodes)
        return OpenAPIContract(operations: found.map { entry in
            Operation(segments: entry.segments, method: entry.method,
                      responses: Dictionary(entry.responses.map { ($0.0, Schema(root: $0.1, nodes: nodes, program: program)) }, uniquingKeysWith: { a, _ in a }))
        }, version: version)
    }

    /// A response's JSON schema and where it sits: the `application/json` content's (or
    /// any `+json` type's), through a `$ref` to `#/components/responses/…` if there is one.
    static func jsonSchema(of response: JSONValue, at pointer: String, in document: JSONValue,
                           base: String) throws(SchemaError) -> (JSONValue, String)? {
        var response = response, pointer = pointer
        if case .string(let reference)? = response["$ref"] {
            guard reference.hasPrefix("#"), let target = document.at(pointer: SchemaURI.percentDecoded(String(reference.dropFirst()))) else {
                throw SchemaError(location: base + "#" + pointer, message: "$ref \(reference) names no response in the document")
            }
            response = target
            pointer = SchemaURI.percentDecoded(String(reference.dropFirst()))
        }
        guard case .object(let contents)? = response["content"] else { return nil }
        let json = contents.first { $0.0.lowercased().hasPrefix("application/json") }
            ?? contents.first { $0.0.lowercased().contains("+json") }
        guard let (type, content) = json, let schema = content["schema"] else { return nil }
        return (schema, pointer + "/content/" + JSONPointer.escape(type) + "/schema")
    }
}

extension JSONValue {
    /// The value at a JSON pointer (RFC 6901), nil when there is none.
    func at(pointer: String) -> JSONValue? {
        guard !pointer.isEmpty else { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var current = self
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = String(raw).replacing("~1", with: "/").replacing("~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members.last(where: { $0.0 == token })?.1 else { return nil }
                current = next
            case .array(let items):
                guard let i = Int(token), items.indices.contains(i) else { return nil }
                current = items[i]
            default:
                return nil
            }
        }
        return current
    }
}
