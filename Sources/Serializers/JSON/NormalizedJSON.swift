/// JSON text that serializerd produced or validated: compact, UTF-8, normalized
/// escapes. Response serializers return it so the JSON path never needs a tree.
public struct NormalizedJSON: Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]
    /// False when no number in `bytes` can be one a double cannot hold exactly (the JSON
    /// fast path saw only short plain numbers): `output.numbers` then has nothing to read.
    public let mayHoldUnsafeNumbers: Bool

    /// Wraps bytes known to be normalized JSON (from the normalizer or `JSONWriter`).
    init(trusted bytes: [UInt8], mayHoldUnsafeNumbers: Bool = true) {
        self.bytes = bytes
        self.mayHoldUnsafeNumbers = mayHoldUnsafeNumbers
    }

    public static func == (a: NormalizedJSON, b: NormalizedJSON) -> Bool { a.bytes == b.bytes }

    public init(_ value: JSONValue) {
        // Writing a JSONValue fails only in canonical mode.
        self.bytes = (try? value.encoded()) ?? Array("null".utf8)
        mayHoldUnsafeNumbers = true
    }

    /// Writes a value, charging `budget` as it goes (DESIGN §5, "Bounded work").
    public init(_ value: JSONValue, budget: OutputBudget) throws(TranscodeError) {
        var writer = JSONWriter(budget: budget)
        try? writer.write(value) // fails only in canonical mode
        if writer.exceeded { throw budget.exceeded("the JSON") }
        self.bytes = writer.bytes
        mayHoldUnsafeNumbers = true
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
