import Serializers

/// A JSON Schema 2020-12 document compiled for validation (DESIGN §10): every keyword
/// checked and its operands parsed once, `$ref`s linked to their targets.
public final class Schema: Sendable {
    let root: SchemaNode
    /// The nodes, kept alive together: `$ref` links among them are unowned.
    let nodes: [SchemaNode]
    /// The document's schemas for the one-pass walk (shared by an OpenAPI document's
    /// schemas), and where this one starts in it; nil when it has too many nodes.
    let program: SchemaProgram?
    let programRoot: Int32

    init(root: SchemaNode, nodes: [SchemaNode], program: SchemaProgram?) {
        self.root = root
        self.nodes = nodes
        self.program = program
        programRoot = program?.node(for: root) ?? 0
    }
}

/// The JSON types a `type` names (`integer` is a number with an integer value).
enum JSONType: String, CaseIterable, Sendable {
    case null, boolean, object, array, number, string, integer
}

/// One schema object (or boolean schema) of a document.
final class SchemaNode: @unchecked Sendable {
    /// Where it sits: the document's URI and the JSON pointer to it.
    let location: String
    /// `true` or `false` as a schema.
    var always: Bool?
    var checks: [Check] = []
    /// Whether it (or anything it applies in place) reads `unevaluated*`: only then are
    /// the evaluated members and items of its instance tracked.
    var needsAnnotations = false
    /// The member names `properties` declares (what `additionalProperties` leaves alone).
    var declaredProperties: Set<String> = []
    /// The patterns `patternProperties` declares.
    var declaredPatterns: [PatternRegex] = []
    /// How many items `prefixItems` covers (`items` applies after them).
    var prefixCount = 0

    init(location: String) { self.location = location }
}

/// A reference to a node filled in once the whole document is compiled.
final class NodeLink: @unchecked Sendable {
    let target: String
    unowned(unsafe) var node: SchemaNode?
    init(target: String) { self.target = target }
}

/// One keyword, its operands compiled.
enum Check: @unchecked Sendable {
    case type([JSONType])
    case enumeration([JSONValue])
    case constant(JSONValue)
    /// The schemas by name, and the names in the order the schema declares them.
    case properties([String: SchemaNode], order: [String])
    case patternProperties([(PatternRegex, SchemaNode)])
    case pattern(PatternRegex)
    case required([String])
    case additionalProperties(SchemaNode)
    case propertyNames(SchemaNode)
    case items(SchemaNode)
    case prefixItems([SchemaNode])
    case contains(SchemaNode, min: Int, max: Int?)
    case minItems(Int), maxItems(Int), uniqueItems
    case minProperties(Int), maxProperties(Int)
    case dependentRequired([(String, [String])])
    case minimum(ExactNumber), maximum(ExactNumber), exclusiveMinimum(ExactNumber), exclusiveMaximum(ExactNumber)
    case multipleOf(ExactNumber)
    case minLength(Int), maxLength(Int)
    case format(SchemaFormat)
    case allOf([SchemaNode]), anyOf([SchemaNode]), oneOf([SchemaNode])
    case not(SchemaNode)
    case conditional(if: SchemaNode, then: SchemaNode?, else: SchemaNode?)
    case dependentSchemas([(String, SchemaNode)])
    case unevaluatedProperties(SchemaNode)
    case unevaluatedItems(SchemaNode)
    case ref(NodeLink)
    /// OpenAPI 3.0's `nullable: true` beside a `type`: null is allowed too.
    case nullable

    var keyword: String {
        switch self {
        case .type: "type"
        case .enumeration: "enum"
        case .constant: "const"
        case .properties: "properties"
        case .patternProperties: "patternProperties"
        case .pattern: "pattern"
        case .required: "required"
        case .additionalProperties: "additionalProperties"
        case .propertyNames: "propertyNames"
        case .items: "items"
        case .prefixItems: "prefixItems"
        case .contains: "contains"
        case .minItems: "minItems"
        case .maxItems: "maxItems"
        case .uniqueItems: "uniqueItems"
        case .minProperties: "minProperties"
        case .maxProperties: "maxProperties"
        case .dependentRequired: "dependentRequired"
        case .minimum: "minimum"
        case .maximum: "maximum"
        case .exclusiveMinimum: "exclusiveMinimum"
        case .exclusiveMaximum: "exclusiveMaximum"
        case .multipleOf: "multipleOf"
        case .minLength: "minLength"
        case .maxLength: "maxLength"
        case .format: "format"
        case .allOf: "allOf"
        case .anyOf: "anyOf"
        case .oneOf: "oneOf"
        case .not: "not"
        case .conditional: "if"
        case .dependentSchemas: "dependentSchemas"
        case .unevaluatedProperties: "unevaluatedProperties"
        case .unevaluatedItems: "unevaluatedItems"
        case .ref: "$ref"
        case .nullable: "nullable"
        }
    }
}

/// Why a schema cannot be used, and where in it.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON pointer (with its document) of the offending schema.
    public let location: String
    public let message: String
    public var description: String { "\(location): \(message)" }
}
