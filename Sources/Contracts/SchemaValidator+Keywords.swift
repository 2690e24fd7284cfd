import Serializers

extension ValidationRun {
    mutating func apply(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ pointer: String, _ record: Bool,
                        _ local: inout Evaluated) -> Bool {
        if let message = assert(check, instance) {
            report(record, node, check, pointer, message)
            return false
        }
        switch check {
        case .properties, .patternProperties, .additionalProperties, .propertyNames, .dependentSchemas, .unevaluatedProperties:
            return object(check, node, instance, pointer, record, &local)
        case .items, .prefixItems, .contains, .unevaluatedItems:
            return array(check, node, instance, pointer, record, &local)
        default:
            return inPlace(check, node, instance, pointer, record, &local)
        }
    }

    /// Applicators on the instance itself.
    mutating func inPlace(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ pointer: String, _ record: Bool,
                          _ local: inout Evaluated) -> Bool {
        switch check {
        case .ref(let link):
            return self.check(link.node!, instance, pointer: pointer, record: record, evaluated: &local)
        case .allOf(let schemas):
            var ok = true
            for schema in schemas where !self.check(schema, instance, pointer: pointer, record: record, evaluated: &local) { ok = false }
            return ok
        case .anyOf(let schemas):
            var passed = 0
            for schema in schemas where self.check(schema, instance, pointer: pointer, record: false, evaluated: &local) { passed += 1 }
            if passed == 0 { report(record, node, check, pointer, "matches none of the \(schemas.count) schemas") }
            return passed > 0
        case .oneOf(let schemas):
            var passed = 0
            var kept = Evaluated()
            for schema in schemas {
                var one = Evaluated()
                if self.check(schema, instance, pointer: pointer, record: false, evaluated: &one) { passed += 1; kept = one }
            }
            guard passed == 1 else {
                report(record, node, check, pointer, passed == 0 ? "matches none of the \(schemas.count) schemas" : "matches \(passed) schemas, not exactly one")
                return false
            }
            local.merge(kept)
            return true
        case .not(let schema):
            var ignored = Evaluated()
            guard self.check(schema, instance, pointer: pointer, record: false, evaluated: &ignored) else { return true }
            report(record, node, check, pointer, "matches a schema it must not")
            return false
        case .conditional(let condition, let then, let otherwise):
            var branch = Evaluated()
            let holds = self.check(condition, instance, pointer: pointer, record: false, evaluated: &branch)
            if holds { local.merge(branch) }
            guard let next = holds ? then : otherwise else { return true }
            return self.check(next, instance, pointer: pointer, record: record, evaluated: &local)
        default:
            return true
        }
    }

    mutating func object(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ pointer: String, _ record: Bool,
                         _ local: inout Evaluated) -> Bool {
        guard case .object(let members) = instance else { return true }
        var ok = true
        switch check {
        case .properties(let schemas):
            for (name, value) in members {
                guard let schema = schemas[name] else { continue }
                local.properties.insert(name)
                if !descend(schema, value, pointer, name, record) { ok = false }
            }
        case .patternProperties(let patterns):
            for (name, value) in members {
                for (regex, schema) in patterns where regex.matches(name) {
                    local.properties.insert(name)
                    if !descend(schema, value, pointer, name, record) { ok = false }
                }
            }
        case .additionalProperties(let schema):
            let declared = node.declaredProperties
            let patterns = node.declaredPatterns
            for (name, value) in members where !declared.contains(name) && !patterns.contains(where: { $0.matches(name) }) {
                local.properties.insert(name)
                if !descend(schema, value, pointer, name, record) { ok = false }
            }
        case .propertyNames(let schema):
            for (name, _) in members where !descend(schema, .string(name), pointer, name, record) { ok = false }
        case .dependentSchemas(let dependencies):
            for (name, schema) in dependencies where instance[name] != nil {
                if !self.check(schema, instance, pointer: pointer, record: record, evaluated: &local) { ok = false }
            }
        case .unevaluatedProperties(let schema):
            for (name, value) in members where !local.properties.contains(name) {
                if !descend(schema, value, pointer, name, record) { ok = false }
            }
            for (name, _) in members { local.properties.insert(name) }
        default:
            break
        }
        return ok
    }

    mutating func array(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ pointer: String, _ record: Bool,
                        _ local: inout Evaluated) -> Bool {
        guard case .array(let items) = instance else { return true }
        var ok = true
        switch check {
        case .prefixItems(let schemas):
            for (i, (schema, item)) in zip(schemas, items).enumerated() where !descend(schema, item, pointer, String(i), record) { ok = false }
            local.items = max(local.items, min(schemas.count, items.count))
        case .items(let schema):
            for i in node.prefixCount..<max(node.prefixCount, items.count) where !descend(schema, items[i], pointer, String(i), record) { ok = false }
            if items.count > node.prefixCount { local.allItems = true }
        case .contains(let schema, let min, let max):
            var matched = 0
            for (i, item) in items.enumerated() {
                var ignored = Evaluated()
                if self.check(schema, item, pointer: pointer + "/" + String(i), record: false, evaluated: &ignored) {
                    matched += 1
                    local.itemIndices.insert(i)
                }
            }
            if matched < min { report(record, node, check, pointer, "\(matched) items match, at least \(min) must"); ok = false }
            if let max, matched > max { report(record, node, check, pointer, "\(matched) items match, at most \(max) may"); ok = false }
        case .unevaluatedItems(let schema):
            for (i, item) in items.enumerated() where !local.covers(item: i) {
                if !descend(schema, item, pointer, String(i), record) { ok = false }
            }
            local.allItems = true
        default:
            break
        }
        return ok
    }

    /// A member or item against its schema; its own annotations stay with it.
    mutating func descend(_ schema: SchemaNode, _ value: JSONValue, _ pointer: String, _ token: String, _ record: Bool) -> Bool {
        var ignored = Evaluated()
        return check(schema, value, pointer: pointer + "/" + JSONPointer.escape(token), record: record, evaluated: &ignored)
    }
}

extension SchemaNode {
    /// The member names `properties` declares (what `additionalProperties` leaves alone).
    var declaredProperties: Set<String> {
        for check in checks { if case .properties(let schemas) = check { return Set(schemas.keys) } }
        return []
    }

    /// The patterns `patternProperties` declares.
    var declaredPatterns: [PatternRegex] {
        for check in checks { if case .patternProperties(let patterns) = check { return patterns.map(\.0) } }
        return []
    }

    /// How many items `prefixItems` covers (`items` applies after them).
    var prefixCount: Int {
        for check in checks { if case .prefixItems(let schemas) = check { return schemas.count } }
        return 0
    }
}
