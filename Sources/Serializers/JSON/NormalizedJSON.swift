/// JSON text that serializerd produced or validated: compact, UTF-8, normalized
/// escapes. Response serializers return it so the JSON path never needs a tree.
public struct NormalizedJSON: Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]
    /// How many numbers in `bytes` no double holds exactly, when whoever wrote them
    /// counted (the JSON fast path does): `output.numbers` then need not read them.
    public let knownUnsafeNumbers: Int?
    /// The contract the normalizer checked these bytes against while writing them, when
    /// it could vouch for them; any rewrite of the bytes makes a value without it.
    public let vouch: ContractVouch?

    /// Wraps bytes known to be normalized JSON (from the normalizer or `JSONWriter`).
    init(trusted bytes: [UInt8], knownUnsafeNumbers: Int? = nil, vouch: ContractVouch? = nil) {
        self.bytes = bytes
        self.knownUnsafeNumbers = knownUnsafeNumbers
        self.vouch = vouch
    }

    public static func == (a: NormalizedJSON, b: NormalizedJSON) -> Bool { a.bytes == b.bytes }

    public init(_ value: JSONValue) {
        // Writing a JSONValue fails only in canonical mode.
        self.bytes = (try? value.encoded()) ?? Array("null".utf8)
        knownUnsafeNumbers = nil
        vouch = nil
    }

    /// Writes a value, charging `budget` as it goes (DESIGN §5, "Bounded work").
    public init(_ value: JSONValue, budget: OutputBudget) throws(TranscodeError) {
        var writer = JSONWriter(budget: budget)
        try? writer.write(value) // fails only in canonical mode
        if writer.exceeded { throw budget.exceeded("the JSON") }
        self.bytes = writer.bytes
        knownUnsafeNumbers = nil
        vouch = nil
    }

    public static let null = NormalizedJSON(trusted: Array("null".utf8))

    /// The value as a tree.
    public var value: JSONValue { NormalizedReader.read(bytes) }

    /// RFC 8785 canonical form; fails only for numbers outside double range.
    public func canonicalized() throws(JSONError) -> NormalizedJSON {
        NormalizedJSON(trusted: try value.encoded(canonical: true))
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
    public var description: String { text }
}
