import Serializers

extension KeywordContext {
    /// One keyword of the schema object: a check on `node`, an annotation, or an error.
    mutating func compile(_ key: String, _ member: JSONValue) throws(SchemaError) {
        if Self.assertions.contains(key) {
            // Some hold no check at all (`uniqueItems: false`, an unknown `format`).
            if let check = try assertion(key, member) { node.checks.append(check) }
            return
        }
        if let check = try applicator(key, member) { return node.checks.append(check) }
        switch key {
        case "$defs":
            _ = try members(key, member)
        case "then", "else":
            // Read with `if`; without one they only name schemas (a `$ref` may reach them).
            if value["if"] == nil { _ = try sub(member, key) }
        case "contentSchema":
            _ = try sub(member, key)
        case "minContains", "maxContains":
            _ = try count(key, member)
        case "$id", "$anchor", "$schema", "$comment":
            guard case .string = member else { throw fail(key, "must be a string") }
        case _ where SchemaCompiler.annotations.contains(key):
            break
        case _ where compiler.dialect != .jsonSchema && ["example", "discriminator", "xml", "externalDocs"].contains(key):
            break
        default:
            throw fail(key, "is not a supported keyword")
        }
    }

    static let assertions: Set<String> = ["type", "enum", "const", "required", "minItems", "maxItems", "uniqueItems",
                                          "minProperties", "maxProperties", "minLength", "maxLength", "minimum", "maximum",
                                          "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "dependentRequired", "format",
                                          "nullable", "pattern"]

    /// Keywords that look at the instance itself.
    func assertion(_ key: String, _ member: JSONValue) throws(SchemaError) -> Check? {
        switch key {
        case "type":
            let names: [String]
            if case .string(let one) = member { names = [one] } else { names = try strings(key, member) }
            var types: [JSONType] = []
            for name in names {
                guard let type = JSONType(rawValue: name) else { throw fail(key, "\(name) is not a JSON type") }
                types.append(type)
            }
            return .type(types)
        case "enum":
            guard case .array(let values) = member else { throw fail(key, "must be an array") }
            return .enumeration(values)
        case "const": return .constant(member)
        case "required": return .required(try strings(key, member))
        case "minItems": return .minItems(try count(key, member))
        case "maxItems": return .maxItems(try count(key, member))
        case "uniqueItems":
            guard case .bool(let on) = member else { throw fail(key, "must be a boolean") }
            return on ? .uniqueItems : nil
        case "minProperties": return .minProperties(try count(key, member))
        case "maxProperties": return .maxProperties(try count(key, member))
        case "minLength": return .minLength(try count(key, member))
        case "maxLength": return .maxLength(try count(key, member))
        case "exclusiveMinimum", "exclusiveMaximum":
            // OpenAPI 3.0 (draft 4's form): a flag on `minimum`/`maximum`, read with them.
            if compiler.dialect == .openAPI30, case .bool = member { return nil }
            let bound = try number(key, member)
            return key == "exclusiveMinimum" ? .exclusiveMinimum(bound) : .exclusiveMaximum(bound)
        case "minimum", "maximum":
            let bound = try number(key, member)
            let exclusive = compiler.dialect == .openAPI30 && value[key == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum"] == .bool(true)
            switch (key, exclusive) {
            case ("minimum", false): return .minimum(bound)
            case ("minimum", true): return .exclusiveMinimum(bound)
            case (_, false): return .maximum(bound)
            default: return .exclusiveMaximum(bound)
            }
        case "multipleOf":
            let divisor = try number(key, member)
            guard !divisor.isZero, !divisor.negative else { throw fail(key, "must be above zero") }
            return .multipleOf(divisor)
        case "dependentRequired":
            guard case .object(let entries) = member else { throw fail(key, "must be an object of string arrays") }
            var out: [(String, [String])] = []
            for (name, list) in entries { out.append((name, try strings(key, list))) }
            return .dependentRequired(out)
        case "pattern":
            guard case .string(let source) = member else { throw fail(key, "must be a string") }
            return .pattern(try regex(key, source))
        case "format":
            guard case .string(let name) = member else { throw fail(key, "must be a string") }
            // Formats this validator does not know are annotations (2020-12 §7.2).
            return SchemaFormat(rawValue: name).map { .format($0) }
        case "nullable":
            guard case .bool(let on) = member else { throw fail(key, "must be a boolean") }
            return on ? .nullable : nil
        default:
            return nil
        }
    }

    /// Keywords that apply subschemas.
    mutating func applicator(_ key: String, _ member: JSONValue) throws(SchemaError) -> Check? {
        switch key {
        case "properties":
            let entries = try members(key, member)
            let schemas = Dictionary(entries, uniquingKeysWith: { $1 })
            var named = Set<String>()
            return .properties(schemas, order: entries.map(\.0).filter { named.insert($0).inserted })
        case "patternProperties":
            var out: [(PatternRegex, SchemaNode)] = []
            for (source, schema) in try members(key, member) { out.append((try regex(key, source), schema)) }
            return .patternProperties(out)
        case "additionalProperties": return .additionalProperties(try sub(member, key))
        case "propertyNames": return .propertyNames(try sub(member, key))
        case "items": return .items(try sub(member, key))
        case "prefixItems": return .prefixItems(try subs(key, member))
        case "contains":
            let schema = try sub(member, key)
            let min = try value["minContains"].map { (v) throws(SchemaError) in try count("minContains", v) } ?? 1
            let max = try value["maxContains"].map { (v) throws(SchemaError) in try count("maxContains", v) }
            return .contains(schema, min: min, max: max)
        case "allOf": return .allOf(try subs(key, member))
        case "anyOf": return .anyOf(try subs(key, member))
        case "oneOf": return .oneOf(try subs(key, member))
        case "not": return .not(try sub(member, key))
        case "if":
            let condition = try sub(member, key)
            let then = try value["then"].map { (v) throws(SchemaError) in try sub(v, "then") }
            let otherwise = try value["else"].map { (v) throws(SchemaError) in try sub(v, "else") }
            return .conditional(if: condition, then: then, else: otherwise)
        case "dependentSchemas": return .dependentSchemas(try members(key, member))
        case "unevaluatedProperties":
            node.needsAnnotations = true
            return .unevaluatedProperties(try sub(member, key))
        case "unevaluatedItems":
            node.needsAnnotations = true
            return .unevaluatedItems(try sub(member, key))
        case "$ref":
            guard case .string(let reference) = member else { throw fail(key, "must be a string") }
            let link = NodeLink(target: SchemaURI.resolve(reference, against: base))
            compiler.links.append(link)
            return .ref(link)
        default:
            return nil
        }
    }

    func regex(_ key: String, _ source: String) throws(SchemaError) -> PatternRegex {
        do throws(PatternError) {
            return try PatternRegex(source)
        } catch {
            throw fail(key, "\(source) is not a pattern RE2 runs: \(error.reason)")
        }
    }
}
