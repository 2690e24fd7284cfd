/// Normalized JSON as a closed value type.
///
/// Objects keep member order (duplicates included) and numbers keep their source
/// lexeme, so nothing is reordered or rounded unless canonical output asks for it.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number's JSON lexeme, exactly as the source wrote it (validated).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` (the last one, if the source repeated it).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    public subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Compact JSON text.
    public func encoded(canonical: Bool = false) throws(JSONError) -> [UInt8] {
        var writer = JSONWriter(canonical: canonical)
        try writer.write(self)
        return writer.bytes
    }
}
