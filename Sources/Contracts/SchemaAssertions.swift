import Serializers

extension ValidationRun {
    /// A keyword that looks at the instance alone: nil when it holds, else why not.
    func assert(_ check: Check, _ instance: JSONValue) -> String? {
        switch check {
        case .type(let types):
            return types.contains(where: { instance.isOf($0) }) ? nil : "is \(instance.typeName), not \(types.map(\.rawValue).joined(separator: " or "))"
        case .nullable:
            return nil
        case .enumeration(let values):
            return values.contains(where: { JSONEquality.equal($0, instance) }) ? nil : "is none of the \(values.count) allowed values"
        case .constant(let value):
            return JSONEquality.equal(value, instance) ? nil : "is not the one allowed value"
        case .required(let names):
            guard case .object(let members) = instance else { return nil }
            // One pass over the members, not one per required name.
            var missing = Set(names)
            for (name, _) in members where !missing.isEmpty { missing.remove(name) }
            return missing.isEmpty ? nil : "lacks " + names.filter(missing.contains).joined(separator: ", ")
        case .dependentRequired(let dependencies):
            guard case .object = instance else { return nil }
            for (name, needs) in dependencies where instance[name] != nil {
                if let missing = needs.first(where: { instance[$0] == nil }) { return "has \(name) but lacks \(missing)" }
            }
            return nil
        case .minProperties(let n):
            guard case .object(let members) = instance else { return nil }
            return members.count >= n ? nil : "has \(members.count) members, fewer than \(n)"
        case .maxProperties(let n):
            guard case .object(let members) = instance else { return nil }
            return members.count <= n ? nil : "has \(members.count) members, more than \(n)"
        case .minItems(let n):
            guard case .array(let items) = instance else { return nil }
            return items.count >= n ? nil : "has \(items.count) items, fewer than \(n)"
        case .maxItems(let n):
            guard case .array(let items) = instance else { return nil }
            return items.count <= n ? nil : "has \(items.count) items, more than \(n)"
        case .uniqueItems:
            guard case .array(let items) = instance else { return nil }
            return JSONEquality.firstDuplicate(items).map { "items \($0.0) and \($0.1) are equal" }
        // Characters are code points: never more than the UTF-8 bytes, so those decide
        // first without counting.
        case .minLength(let n):
            guard case .string(let s) = instance, s.utf8.count / 4 < n else { return nil }
            return s.unicodeScalars.count >= n ? nil : "is shorter than \(n) characters"
        case .maxLength(let n):
            guard case .string(let s) = instance, s.utf8.count > n else { return nil }
            return s.unicodeScalars.count <= n ? nil : "is longer than \(n) characters"
        case .pattern(let regex):
            guard case .string(let s) = instance else { return nil }
            return regex.matches(s) ? nil : "does not match \(regex.source)"
        case .format(let format):
            guard case .string(let s) = instance else { return nil }
            return format.accepts(s) ? nil : "is not a valid \(format.rawValue)"
        default:
            return numeric(check, instance)
        }
    }

    func numeric(_ check: Check, _ instance: JSONValue) -> String? {
        guard case .number(let lexeme) = instance, let n = ExactNumber(lexeme) else { return nil }
        switch check {
        case .minimum(let bound): return n < bound ? "is below the minimum \(bound)" : nil
        case .maximum(let bound): return bound < n ? "is above the maximum \(bound)" : nil
        case .exclusiveMinimum(let bound): return bound < n ? nil : "is not above \(bound)"
        case .exclusiveMaximum(let bound): return n < bound ? nil : "is not below \(bound)"
        case .multipleOf(let divisor):
            switch n.isMultiple(of: divisor) {
            case true?: return nil
            case false?: return "is not a multiple of \(divisor)"
            case nil: return "has more than \(ExactNumber.multipleDigitLimit) significant digits to divide"
            }
        default: return nil
        }
    }
}

extension JSONValue {
    func isOf(_ type: JSONType) -> Bool {
        switch (type, self) {
        case (.null, .null), (.boolean, .bool), (.object, .object), (.array, .array), (.number, .number), (.string, .string): true
        case (.integer, .number(let lexeme)): ExactNumber(lexeme)?.isInteger ?? false
        default: false
        }
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// JSON Schema's equality: numbers by value, objects whatever their members' order.
enum JSONEquality {
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        // Code point by code point: JSON strings are not compared by Unicode equivalence.
        case let (.string(x), .string(y)): return x.utf8.elementsEqual(y.utf8)
        case let (.number(x), .number(y)): return x == y || ExactNumber(x).map { ExactNumber(y) == $0 } ?? false
        case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { name, value in b[name].map { equal(value, $0) } ?? false }
        default: return false
        }
    }

    /// A key equal values share: numbers by their exact value, members sorted.
    static func key(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "n"
        case .bool(let b): out += b ? "t" : "f"
        case .number(let lexeme): out += "#" + (ExactNumber(lexeme)?.description ?? lexeme) + ";"
        case .string(let s): out += "s\(s.utf8.count):" + s
        case .array(let items):
            out += "[\(items.count):"
            for item in items { key(item, into: &out) }
        case .object(let members):
            out += "{\(members.count):"
            for (name, member) in members.sorted(by: { $0.0 < $1.0 }) {
                out += "\(name.utf8.count):" + name
                key(member, into: &out)
            }
        }
    }

    /// The first two equal items, by index: linear in the items (hashing), not quadratic.
    static func firstDuplicate(_ items: [JSONValue]) -> (Int, Int)? {
        var seen: [String: Int] = [:]
        seen.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            var k = ""
            key(item, into: &k)
            if let j = seen[k] { return (j, i) }
            seen[k] = i
        }
        return nil
    }
}
