import Cache
import Contracts
import Glibc
import Serializers
import Yams

/// A route's `contract:` (DESIGN §10): the JSON Schema its normalized output must meet,
/// and what a violation does; and whether its answers' shapes are learned for drift.
public struct RouteContract: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// The answer is forwarded; the violation is counted and kept as evidence.
        case report
        /// The answer fails with `contract-violation`.
        case enforce
    }

    /// A JSON Schema for every answer, or an OpenAPI document's schema for the
    /// operation and status of each.
    public enum Source: Sendable {
        case schema(Schema)
        case openAPI(OpenAPIContract)
    }

    /// Nil when the route only learns shapes.
    public let source: Source?
    public let mode: Mode
    /// The schema file as the config names it, for messages.
    public let file: String
    /// A hash of the schema file's bytes: an enforced contract is part of the route's
    /// cache fingerprint.
    public let digest: UInt64
    /// `drift: true`: answers an endpoint's status must have taught before a change is
    /// reported (`drift_after`); nil when shapes are not learned.
    public let driftAfter: Int?
    /// The route's learned shapes (the process's, by route name): set with `driftAfter`.
    public var shapes: RouteShapes?

    /// The violations of a normalized answer (at most 20), empty when it meets the schema
    /// (or an OpenAPI document has none for the request and status). `path` is the
    /// request's path after the route's prefix.
    public func check(_ value: NormalizedJSON, maxDepth: Int, path: Substring, method: String, status: Int) -> [Violation] {
        guard let schema = schema(path: path, method: method, status: status) else { return [] }
        return schema.validate(value, maxDepth: maxDepth)
    }

    /// What a JSON route's normalizer checks of the answer's schema as it writes the answer
    /// (`check` then reads again only what it could not vouch for).
    public func outputContract(path: Substring, method: String, status: Int) -> OutputContract? {
        schema(path: path, method: method, status: status)?.outputContract
    }

    /// The schema an answer must meet: the route's, or the OpenAPI document's for the
    /// request and status; nil when there is none.
    private func schema(path: Substring, method: String, status: Int) -> Schema? {
        switch source {
        case nil: nil
        case .schema(let one): one
        case .openAPI(let document): document.schema(path: "/" + path, method: method, status: status)
        }
    }

    /// The failure a violation makes: each violation's pointer, keyword and schema location.
    public func failure(_ violations: [Violation]) -> SerializationError {
        let count = violations.count == Violation.limit ? "at least \(violations.count) violations" : "\(violations.count) violation" + (violations.count == 1 ? "" : "s")
        return .contractViolation(detail: "\(count) of \(file): " + violations.map(\.description).joined(separator: "; "))
    }
}

extension Violation {
    /// The most a check lists (DESIGN §10).
    static let limit = 20
}

extension ConfigLoader {
    /// A schema file is read whole; a larger one is a config error.
    static let maxContractFileBytes = 16 << 20

    /// A route's `contract:`; nil when absent.
    static func contract(_ node: ConfigNode?) throws(ConfigError) -> RouteContract? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["schema", "openapi", "mode", "drift", "drift_after"])
        var mode = RouteContract.Mode.report
        if let n = m["mode"] {
            let text = try n.string()
            guard let parsed = RouteContract.Mode(rawValue: text) else { throw n.error("expected report or enforce, found '\(text)'") }
            mode = parsed
        }
        var driftAfter: Int?
        if let n = m["drift"], try n.bool() { driftAfter = 20 }
        if let n = m["drift_after"] {
            guard driftAfter != nil else { throw n.error("drift_after needs drift: true") }
            driftAfter = try n.int(in: 1...1_000_000)
        }
        if m["schema"] != nil && m["openapi"] != nil { throw node.error("expected schema or openapi, not both") }
        guard let fileNode = m["schema"] ?? m["openapi"] else {
            guard driftAfter != nil else { throw node.error("missing required key 'schema' (or 'openapi', or drift: true)") }
            if let n = m["mode"] { throw n.error("mode needs a schema or openapi document to check") }
            return RouteContract(source: nil, mode: mode, file: "", digest: 0, driftAfter: driftAfter)
        }
        let name = try fileNode.string()
        let path = absolute(relative(name, to: fileNode.file))
        let directory = String(path[...path.lastIndex(of: "/")!])
        let bytes = try regularFile(fileNode, path: path, maxBytes: maxContractFileBytes, what: "a contract")
        let openAPI = m["openapi"] != nil
        let document = openAPI ? try openAPIDocument(fileNode, path: path, bytes: bytes) : try contractDocument(fileNode, path: path, bytes: bytes)
        let source: RouteContract.Source
        do throws(SchemaError) {
            if openAPI {
                source = .openAPI(try OpenAPIContract.compile(document, uri: "file://" + path))
            } else {
                // Other documents are read from the contract's directory or below it, never elsewhere.
                source = .schema(try SchemaCompiler.compile(document, uri: "file://" + path) { uri in
                    guard uri.hasPrefix("file://" + directory), !uri.contains("/../") else { return nil }
                    return try? contractDocument(fileNode, path: String(uri.dropFirst("file://".count)))
                })
            }
        } catch {
            let location = error.location.hasPrefix("file://") ? String(error.location.dropFirst("file://".count)) : error.location
            throw fileNode.error("\(location): \(error.message)")
        }
        return RouteContract(source: source, mode: mode, file: name, digest: OutputTag.hash(bytes), driftAfter: driftAfter)
    }

    /// A schema document: a regular file of at most `maxContractFileBytes`, JSON.
    static func contractDocument(_ node: ConfigNode, path: String, bytes: [UInt8]? = nil) throws(ConfigError) -> JSONValue {
        let bytes = if let bytes { bytes } else { try regularFile(node, path: path, maxBytes: maxContractFileBytes, what: "a contract") }
        do throws(JSONError) {
            return try JSONValue.parse(bytes)
        } catch {
            throw node.error("\(path): \(error.description)")
        }
    }

    /// An OpenAPI document, JSON or YAML.
    static func openAPIDocument(_ node: ConfigNode, path: String, bytes: [UInt8]) throws(ConfigError) -> JSONValue {
        if path.lowercased().hasSuffix(".json") { return try contractDocument(node, path: path, bytes: bytes) }
        let composed: Yams.Node?
        do {
            composed = try Yams.compose(yaml: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw node.error("\(path): \(error)")
        }
        guard let composed, let value = yamlValue(composed) else { throw node.error("\(path): expected a YAML mapping") }
        return value
    }

    /// YAML as JSON, without the config's `${…}` substitution (a document's text is its own):
    /// plain scalars that read as null, booleans or JSON numbers are those; the rest strings.
    static func yamlValue(_ node: Yams.Node) -> JSONValue? {
        switch node {
        case .mapping(let mapping):
            var members: [(String, JSONValue)] = []
            for (key, value) in mapping {
                guard let name = key.string, let member = yamlValue(value) else { return nil }
                members.append((name, member))
            }
            return .object(members)
        case .sequence(let sequence):
            var items: [JSONValue] = []
            for value in sequence {
                guard let item = yamlValue(value) else { return nil }
                items.append(item)
            }
            return .array(items)
        case .scalar(let scalar):
            let text = scalar.string
            guard scalar.style == .plain else { return .string(text) }
            if ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
            if ["true", "True", "TRUE", "false", "False", "FALSE"].contains(text) { return .bool(text.lowercased() == "true") }
            if case .number? = try? JSONValue.parse(text, options: JSONReadOptions(allowFragments: true)) { return .number(text) }
            return .string(text)
        default:
            return nil
        }
    }

    /// An absolute path: a relative one is taken from the working directory.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd + (cwd.hasSuffix("/") ? "" : "/") + path
    }
}
