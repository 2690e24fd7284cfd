import Serializers

extension ValidationRun {
    mutating func apply(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ record: Bool, _ tracking: Bool,
                        _ local: inout Evaluated) -> Bool {
        if let message = assert(check, instance) {
            report(record, node, check, message)
            return false
        }
        switch check {
        case .properties, .patternProperties, .additionalProperties, .propertyNames, .dependentSchemas, .unevaluatedProperties:
            return object(check, node, instance, record, tracking, &local)
        case .items, .prefixItems, .contains, .unevaluatedItems:
            return array(check, node, instance, record, tracking, &local)
        default:
            return inPlace(check, node, instance, record, tracking, &local)
        }
    }

    /// Applicators on the instance itself.
    mutating func inPlace(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ record: Bool, _ tracking: Bool,
                          _ local: inout Evaluated) -> Bool {
        switch check {
        case .ref(let link):
            return self.check(link.node!, instance, record: record, tracking: tracking, evaluated: &local)
        case .allOf(let schemas):
            var ok = true
            for schema in schemas where !self.check(schema, instance, record: record, tracking: tracking, evaluated: &local) { ok = false }
            return ok
        case .anyOf(let schemas):
            var passed = 0
            for schema in schemas where self.check(schema, instance, record: false, tracking: tracking, evaluated: &local) { passed += 1 }
            if passed == 0 { report(record, node, check, "matches none of the \(schemas.count) schemas") }
            return passed > 0
        case .oneOf(let schemas):
            var passed = 0
            var kept = Evaluated()
            for schema in schemas {
                var one = Evaluated()
                if self.check(schema, instance, record: false, tracking: tracking, evaluated: &one) { passed += 1; kept = one }
            }
            guard passed == 1 else {
                report(record, node, check, passed == 0 ? "matches none of the \(schemas.count) schemas" : "matches \(passed) schemas, not exactly one")
                return false
            }
            local.merge(kept)
            return true
        case .not(let schema):
            var ignored = Evaluated()
            guard self.check(schema, instance, record: false, tracking: tracking, evaluated: &ignored) else { return true }
            report(record, node, check, "matches a schema it must not")
            return false
        case .conditional(let condition, let then, let otherwise):
            var branch = Evaluated()
            let holds = self.check(condition, instance, record: false, tracking: tracking, evaluated: &branch)
            if holds { local.merge(branch) }
            guard let next = holds ? then : otherwise else { return true }
            return self.check(next, instance, record: record, tracking: tracking, evaluated: &local)
        default:
            return true
        }
    }

    mutating func object(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ record: Bool, _ tracking: Bool,
                         _ local: inout Evaluated) -> Bool {
        guard case .object(let members) = instance else { return true }
        var ok = true
        switch check {
        case .properties(let schemas, _):
            for (name, value) in members {
                guard let schema = schemas[name] else { continue }
                if tracking { local.properties.insert(name) }
                if !descend(schema, value, .member(name), record) { ok = false }
            }
        case .patternProperties(let patterns):
            for (name, value) in members {
                for (regex, schema) in patterns where regex.matches(name) {
                    if tracking { local.properties.insert(name) }
                    if !descend(schema, value, .member(name), record) { ok = false }
                }
            }
        case .additionalProperties(let schema):
            let declared = node.declaredProperties
            let patterns = node.declaredPatterns
            for (name, value) in members where !declared.contains(name) && !patterns.contains(where: { $0.matches(name) }) {
                if tracking { local.properties.insert(name) }
                if !descend(schema, value, .member(name), record) { ok = false }
            }
        case .propertyNames(let schema):
            for (name, _) in members where !descend(schema, .string(name), .member(name), record) { ok = false }
        case .dependentSchemas(let dependencies):
            for (name, schema) in dependencies where instance[name] != nil {
                if !self.check(schema, instance, record: record, tracking: tracking, evaluated: &local) { ok = false }
            }
        case .unevaluatedProperties(let schema):
            for (name, value) in members where !local.properties.contains(name) {
                if !descend(schema, value, .member(name), record) { ok = false }
            }
            for (name, _) in members { local.properties.insert(name) }
        default:
            break
        }
        return ok
    }

    mutating func array(_ check: Check, _ node: SchemaNode, _ instance: JSONValue, _ record: Bool, _ tracking: Bool,
                        _ local: inout Evaluated) -> Bool {
        guard case .array(let items) = instance else { return true }
        var ok = true
        switch check {
        case .prefixItems(let schemas):
            for (i, (schema, item)) in zip(schemas, items).enumerated() where !descend(schema, item, .item(i), record) { ok = false }
            local.items = max(local.items, min(schemas.count, items.count))
        case .items(let schema):
            for i in node.prefixCount..<max(node.prefixCount, items.count) where !descend(schema, items[i], .item(i), record) { ok = false }
            if items.count > node.prefixCount { local.allItems = true }
        case .contains(let schema, let min, let max):
            var matched = 0
            for (i, item) in items.enumerated() {
                var ignored = Evaluated()
                path.append(.item(i))
                defer { path.removeLast() }
                if self.check(schema, item, record: false, evaluated: &ignored) {
                    matched += 1
                    if tracking { local.itemIndices.insert(i) }
                }
            }
            if matched < min { report(record, node, check, "\(matched) items match, at least \(min) must"); ok = false }
            if let max, matched > max { report(record, node, check, "\(matched) items match, at most \(max) may"); ok = false }
        case .unevaluatedItems(let schema):
            for (i, item) in items.enumerated() where !local.covers(item: i) {
                if !descend(schema, item, .item(i), record) { ok = false }
            }
            local.allItems = true
        default:
            break
        }
        return ok
    }

    /// A member or item against its schema; its own annotations stay with it.
    mutating func descend(_ schema: SchemaNode, _ value: JSONValue, _ token: PathToken, _ record: Bool) -> Bool {
        var ignored = Evaluated()
        path.append(token)
        defer { path.removeLast() }
        return check(schema, value, record: record, evaluated: &ignored)
    }
}

extension SchemaNode {
    /// What `additionalProperties` and `items` read of their neighbours, once the node's
    /// keywords are all compiled.
    func settle() {
        for check in checks {
            switch check {
            case .properties(let schemas, _): declaredProperties = Set(schemas.keys)
            case .patternProperties(let patterns): declaredPatterns = patterns.map(\.0)
            case .prefixItems(let schemas): prefixCount = schemas.count
            default: break
            }
        }
    }
}
