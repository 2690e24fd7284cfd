import Serializers

/// Compiles a JSON Schema 2020-12 document (DESIGN §10). Every keyword is either checked,
/// an annotation, or an error: nothing is silently ignored. `load` reads another
/// document by its absolute URI (a file beside the contract), nil when there is none.
public struct SchemaCompiler {
    /// Nesting of schema objects within a document: deeper is a schema error, not a
    /// stack overflow.
    public static let maxDepth = 256
    /// Significant digits of a number in a schema.
    public static let maxNumberDigits = 100

    static let annotations: Set<String> = ["title", "description", "default", "examples", "deprecated", "readOnly",
                                           "writeOnly", "$comment", "$schema", "$id", "$anchor", "$defs",
                                           // Annotations only in 2020-12 (the content vocabulary asserts nothing).
                                           "contentMediaType", "contentEncoding", "contentSchema",
                                           // Read with their keyword (`contains`, `if`).
                                           "minContains", "maxContains", "then", "else"]

    /// What the documents are: a JSON Schema, or an OpenAPI document's schemas (which
    /// accept its own annotations, and in 3.0 its boolean `exclusiveMinimum`/`Maximum`).
    enum Dialect { case jsonSchema, openAPI30, openAPI31 }

    let load: (String) -> JSONValue?
    var dialect = Dialect.jsonSchema
    /// Each document read, by URI: a `$ref` to a place no schema was compiled at yet
    /// (an OpenAPI document's `#/components/schemas/…`) compiles it there.
    var sources: [String: JSONValue] = [:]
    var registry: [String: SchemaNode] = [:]
    var nodes: [SchemaNode] = []
    var links: [NodeLink] = []
    var documents: Set<String> = []

    public static func compile(_ document: JSONValue, uri: String = "urn:serializerd:contract",
                               load: @escaping (String) -> JSONValue? = { _ in nil }) throws(SchemaError) -> Schema {
        var compiler = SchemaCompiler(load: load)
        let base = SchemaURI.split(uri).0
        compiler.documents.insert(base)
        compiler.sources[base] = document
        let root = try compiler.node(document, base: base, pointer: "", depth: 0)
        try compiler.link()
        try SchemaCycles.check(compiler.nodes)
        return Schema(root: root, nodes: compiler.nodes, program: SchemaProgram(compiler.nodes))
    }

    mutating func node(_ value: JSONValue, base: String, pointer: String, depth: Int) throws(SchemaError) -> SchemaNode {
        guard depth <= Self.maxDepth else { throw SchemaError(location: base + "#" + pointer, message: "nested deeper than \(Self.maxDepth) schemas") }
        var base = base, pointer = pointer
        let outer = base + "#" + pointer
        if case .object = value, case .string(let id)? = value["$id"] {
            base = SchemaURI.split(SchemaURI.resolve(id, against: base)).0
            documents.insert(base)
            pointer = ""
        }
        let node = SchemaNode(location: base + "#" + pointer)
        nodes.append(node)
        registry[outer] = registry[outer] ?? node
        registry[node.location] = registry[node.location] ?? node
        switch value {
        case .bool(let b):
            node.always = b
            return node
        case .object(let members):
            if case .string(let anchor)? = value["$anchor"] { registry[base + "#" + anchor] = node }
            var context = KeywordContext(compiler: self, value: value, base: base, pointer: pointer, depth: depth, node: node)
            for (key, member) in members {
                try context.compile(key, member)
            }
            self = context.compiler
            node.settle()
            // OpenAPI 3.0's `nullable: true` adds null to the node's `type`.
            if node.checks.contains(where: { if case .nullable = $0 { true } else { false } }) {
                node.checks = node.checks.map { if case .type(let types) = $0 { .type(types + [.null]) } else { $0 } }
            }
            return node
        default:
            throw SchemaError(location: node.location, message: "a schema is an object or a boolean")
        }
    }

    /// Each `$ref` to its node, loading other documents as they are named.
    mutating func link() throws(SchemaError) {
        var i = 0
        while i < links.count {
            let link = links[i]
            i += 1
            let (document, fragment) = SchemaURI.split(link.target)
            let key = document + "#" + SchemaURI.percentDecoded(fragment ?? "")
            if registry[key] == nil, !documents.contains(document) {
                documents.insert(document)
                if let loaded = load(document) {
                    sources[document] = loaded
                    _ = try node(loaded, base: document, pointer: "", depth: 0)
                }
            }
            let pointer = SchemaURI.percentDecoded(fragment ?? "")
            if registry[key] == nil, pointer.hasPrefix("/"), let value = sources[document]?.at(pointer: pointer) {
                _ = try node(value, base: document, pointer: pointer, depth: 0)
            }
            guard let target = registry[key] else {
                throw SchemaError(location: link.target, message: "$ref \(link.target) names no schema")
            }
            link.node = target
        }
    }
}

/// One schema object's keywords as they are compiled.
struct KeywordContext {
    var compiler: SchemaCompiler
    let value: JSONValue
    let base: String
    let pointer: String
    let depth: Int
    let node: SchemaNode

    func fail(_ key: String, _ message: String) -> SchemaError {
        SchemaError(location: base + "#" + pointer + "/" + JSONPointer.escape(key), message: message)
    }

    mutating func sub(_ value: JSONValue, _ path: String...) throws(SchemaError) -> SchemaNode {
        try compiler.node(value, base: base, pointer: pointer + path.map { "/" + JSONPointer.escape($0) }.joined(), depth: depth + 1)
    }

    mutating func subs(_ key: String, _ value: JSONValue, nonEmpty: Bool = true) throws(SchemaError) -> [SchemaNode] {
        guard case .array(let items) = value, !(nonEmpty && items.isEmpty) else { throw fail(key, "must be a non-empty array of schemas") }
        var out: [SchemaNode] = []
        for (i, item) in items.enumerated() { out.append(try sub(item, key, String(i))) }
        return out
    }

    mutating func members(_ key: String, _ value: JSONValue) throws(SchemaError) -> [(String, SchemaNode)] {
        guard case .object(let entries) = value else { throw fail(key, "must be an object of schemas") }
        var out: [(String, SchemaNode)] = []
        for (name, schema) in entries { out.append((name, try sub(schema, key, name))) }
        return out
    }

    func count(_ key: String, _ value: JSONValue) throws(SchemaError) -> Int {
        guard case .number(let lexeme) = value, let n = ExactNumber(lexeme), n.isInteger, !n.negative else {
            throw fail(key, "must be a non-negative integer")
        }
        if n.isZero { return 0 }
        let places = n.digits.count + n.exponent
        guard places <= 15 else { return Int.max }
        return Int(n.digits.map { String($0) }.joined() + String(repeating: "0", count: n.exponent)) ?? Int.max
    }

    func number(_ key: String, _ value: JSONValue) throws(SchemaError) -> ExactNumber {
        guard case .number(let lexeme) = value, let n = ExactNumber(lexeme) else { throw fail(key, "must be a number") }
        guard n.digits.count <= SchemaCompiler.maxNumberDigits else {
            throw fail(key, "has more than \(SchemaCompiler.maxNumberDigits) significant digits")
        }
        return n
    }

    func strings(_ key: String, _ value: JSONValue) throws(SchemaError) -> [String] {
        guard case .array(let items) = value else { throw fail(key, "must be an array of strings") }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw fail(key, "must be an array of strings") }
            out.append(s)
        }
        return out
    }
}
