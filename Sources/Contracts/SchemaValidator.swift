import Serializers

/// One way an instance fails its schema (DESIGN §10): where in the instance, the keyword,
/// and where the keyword sits in the schema.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    public let pointer: String
    public let keyword: String
    public let schemaLocation: String
    public let message: String
    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(keyword) (\(schemaLocation)): \(message)" }
}

/// What an evaluation learned of the instance, for `unevaluated*`: the members and
/// items some passing subschema looked at.
struct Evaluated {
    var properties: Set<String> = []
    var items = 0
    var allItems = false
    var itemIndices: Set<Int> = []

    mutating func merge(_ other: Evaluated) {
        properties.formUnion(other.properties)
        items = max(items, other.items)
        allItems = allItems || other.allItems
        itemIndices.formUnion(other.itemIndices)
    }

    func covers(item i: Int) -> Bool { allItems || i < items || itemIndices.contains(i) }
}

extension Schema {
    /// The violations of `instance`, at most `limit` of them (empty: it passes).
    public func validate(_ instance: JSONValue, limit: Int = 20) -> [Violation] {
        var run = ValidationRun(limit: limit)
        var evaluated = Evaluated()
        _ = run.check(root, instance, record: true, evaluated: &evaluated)
        return run.violations
    }

    /// The violations of a normalized answer's bytes (compact JSON), at most `limit`:
    /// the one-pass walk first, the tree only when it cannot vouch for the answer. Bytes
    /// that are not JSON within `maxDepth` have none.
    public func validate(json bytes: [UInt8], maxDepth: Int, limit: Int = 20) -> [Violation] {
        if walk(json: bytes) == true { return [] }
        return validateTree(bytes, maxDepth: maxDepth, limit: limit)
    }

    /// The same for a normalizer's output: where the normalizer checked this schema as it
    /// wrote the bytes, only the values it left are read again.
    public func validate(_ value: NormalizedJSON, maxDepth: Int, limit: Int = 20) -> [Violation] {
        validate(json: value.bytes, vouch: value.vouch, maxDepth: maxDepth, limit: limit)
    }

    /// The same for bytes with what the normalizer vouched for as it wrote them.
    public func validate(json bytes: [UInt8], vouch: ContractVouch?, maxDepth: Int, limit: Int = 20) -> [Violation] {
        if let vouch, let program, bytes.withUnsafeBytes({ program.accepts($0, vouch: vouch, root: programRoot) }) == true {
            return []
        }
        return validate(json: bytes, maxDepth: maxDepth, limit: limit)
    }

    /// What the JSON normalizer checks of this schema as it writes an answer; nil when the
    /// schema has no one-pass program.
    public var outputContract: OutputContract? { program?.outputContract(root: programRoot) }

    private func validateTree(_ bytes: [UInt8], maxDepth: Int, limit: Int) -> [Violation] {
        guard let instance = try? JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: true, maxDepth: maxDepth)) else {
            return []
        }
        return validate(instance, limit: limit)
    }

    /// The one-pass walk's verdict on compact JSON bytes: nil when it leaves the answer to
    /// the tree.
    func walk(json bytes: [UInt8]) -> Bool? {
        guard let program else { return nil }
        return bytes.withUnsafeBytes { program.accepts($0, root: programRoot) }
    }

    public func accepts(_ instance: JSONValue) -> Bool {
        var run = ValidationRun(limit: 0)
        var evaluated = Evaluated()
        return run.check(root, instance, record: false, evaluated: &evaluated)
    }
}

struct ValidationRun {
    let limit: Int
    var violations: [Violation] = []
    var depth = 0
    /// Where in the instance the check is: member names and item indexes, made into a
    /// JSON pointer only for a violation.
    var path: [PathToken] = []

    enum PathToken {
        case member(String)
        case item(Int)
    }

    var pointer: String {
        var out = ""
        for token in path {
            switch token {
            case .member(let name): out += "/" + JSONPointer.escape(name)
            case .item(let i): out += "/" + String(i)
            }
        }
        return out
    }
    /// In-place and nested evaluations at once: deeper fails rather than exhausting the stack.
    static let maxDepth = 2_000

    init(limit: Int) { self.limit = limit }

    mutating func report(_ record: Bool, _ node: SchemaNode, _ check: Check, _ message: String) {
        guard record, violations.count < limit else { return }
        violations.append(Violation(pointer: pointer, keyword: check.keyword,
                                    schemaLocation: node.location + "/" + check.keyword, message: message))
    }

    /// Whether `instance` meets `node`; violations recorded only when `record`.
    mutating func check(_ node: SchemaNode, _ instance: JSONValue, record: Bool, tracking: Bool = false,
                        evaluated: inout Evaluated) -> Bool {
        if let always = node.always {
            if !always, record, violations.count < limit {
                violations.append(Violation(pointer: pointer, keyword: "false", schemaLocation: node.location, message: "no value is allowed here"))
            }
            return always
        }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else {
            if record, violations.count < limit {
                violations.append(Violation(pointer: pointer, keyword: "$ref", schemaLocation: node.location,
                                            message: "the schema applies itself deeper than \(Self.maxDepth) times"))
            }
            return false
        }
        var valid = true
        var local = Evaluated()
        // `unevaluated*` run last, after every other keyword has said what it evaluated.
        for check in node.checks {
            switch check {
            case .unevaluatedProperties, .unevaluatedItems: continue
            default:
                if !apply(check, node, instance, record, tracking || node.needsAnnotations, &local) { valid = false }
            }
        }
        if node.needsAnnotations {
            for check in node.checks {
                if case .unevaluatedProperties = check, !apply(check, node, instance, record, tracking || node.needsAnnotations, &local) { valid = false }
                if case .unevaluatedItems = check, !apply(check, node, instance, record, tracking || node.needsAnnotations, &local) { valid = false }
            }
        }
        if valid { evaluated.merge(local) }
        return valid
    }
}
