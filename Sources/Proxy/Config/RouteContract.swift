import Cache
import Contracts
import Glibc
import Serializers

/// A route's `contract:` (DESIGN §10): the JSON Schema its normalized output must meet,
/// and what a violation does.
public struct RouteContract: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// The answer is forwarded; the violation is counted and kept as evidence.
        case report
        /// The answer fails with `contract-violation`.
        case enforce
    }

    public let schema: Schema
    public let mode: Mode
    /// The schema file as the config names it, for messages.
    public let file: String
    /// A hash of the schema file's bytes: an enforced contract is part of the route's
    /// cache fingerprint.
    public let digest: UInt64

    /// The violations of a normalized answer (at most 20), empty when it meets the schema.
    func check(_ value: NormalizedJSON, maxDepth: Int) -> [Violation] {
        guard let instance = try? JSONValue.parse(value.bytes, options: JSONReadOptions(allowFragments: true, maxDepth: maxDepth)) else {
            return []
        }
        return schema.validate(instance)
    }

    /// The failure a violation makes: each violation's pointer, keyword and schema location.
    func failure(_ violations: [Violation]) -> SerializationError {
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
        let m = try node.mapping(allowed: ["schema", "mode"])
        var mode = RouteContract.Mode.report
        if let n = m["mode"] {
            let text = try n.string()
            guard let parsed = RouteContract.Mode(rawValue: text) else { throw n.error("expected report or enforce, found '\(text)'") }
            mode = parsed
        }
        guard let schemaNode = m["schema"] else { throw node.error("missing required key 'schema'") }
        let name = try schemaNode.string()
        let path = absolute(relative(name, to: schemaNode.file))
        let directory = String(path[...path.lastIndex(of: "/")!])
        let bytes = try regularFile(schemaNode, path: path, maxBytes: maxContractFileBytes, what: "a contract")
        let document = try contractDocument(schemaNode, path: path, bytes: bytes)
        do throws(SchemaError) {
            // Other documents are read from the contract's directory or below it, never elsewhere.
            let schema = try SchemaCompiler.compile(document, uri: "file://" + path) { uri in
                guard uri.hasPrefix("file://" + directory), !uri.contains("/../") else { return nil }
                return try? contractDocument(schemaNode, path: String(uri.dropFirst("file://".count)))
            }
            return RouteContract(schema: schema, mode: mode, file: name, digest: OutputTag.hash(bytes))
        } catch {
            let location = error.location.hasPrefix("file://") ? String(error.location.dropFirst("file://".count)) : error.location
            throw schemaNode.error("\(location): \(error.message)")
        }
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

    /// An absolute path: a relative one is taken from the working directory.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd + (cwd.hasSuffix("/") ? "" : "/") + path
    }
}
