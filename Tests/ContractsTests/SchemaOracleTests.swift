@testable import Contracts
import Foundation
import Serializers
import TestSupport
import Testing

/// The validator against an independent one, Python's jsonschema (draft 2020-12), on
/// generated schemas and instances: the same verdict on every pair.
@Suite(.timeLimit(.minutes(5))) struct SchemaOracleTests {
    @Test func agreesWithPythonsJsonschemaOnTenThousandPairs() throws {
        var generator = PairGenerator(seed: 0x5EED_2020_12)
        var pairs: [(JSONValue, JSONValue)] = []
        for _ in 0..<10_000 { pairs.append((generator.schema(depth: 3), generator.instance(depth: 3))) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("oracle-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = pairs.map { #"{"schema":\#(JSONText.of($0.0)),"instance":\#(JSONText.of($0.1))}"# }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let oracle = try ServerBinary.run([Fixture.path("jsonschema_oracle.py"), file.path], timeout: 120,
                                          executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(oracle.status == 0, "\(oracle.stderrText)")
        let verdicts = oracle.stdoutText.split(separator: "\n")
        try #require(verdicts.count == pairs.count)
        var disagreements: [String] = []
        var valid = 0, oracleFailed = 0, walked = 0, vouched = 0
        for (i, (schemaJSON, instance)) in pairs.enumerated() {
            let schema = try SchemaCompiler.compile(schemaJSON)
            let ours = schema.accepts(instance)
            if ours { valid += 1 }
            // The walk over the bytes a route checks decides the same, or leaves it to the tree.
            let bytes = try instance.encoded()
            if let walk = schema.walk(json: bytes) {
                walked += 1
                if walk != ours { disagreements.append("walk \(walk), tree \(ours): \(JSONText.of(schemaJSON)) on \(JSONText.of(instance))") }
            }
            // So does the normalizer's check as it writes them.
            if let checked = schema.checkedWhileNormalizing(bytes) {
                if checked.vouched { vouched += 1 }
                if checked.valid != ours || !checked.sameOutput {
                    disagreements.append("normalizer's check \(checked), tree \(ours): \(JSONText.of(schemaJSON)) on \(JSONText.of(instance))")
                }
            }
            guard !verdicts[i].hasPrefix("E") else {
                // jsonschema 4.10 (Debian 12) sorts an array's items for `unevaluatedItems`,
                // which raises on items of mixed types: no verdict to compare. Anything else
                // it raises on is a disagreement.
                if verdicts[i].hasPrefix("E TypeError '<' not supported") && JSONText.of(schemaJSON).contains("unevaluatedItems") {
                    oracleFailed += 1
                } else {
                    disagreements.append("python: \(verdicts[i]) on \(JSONText.of(schemaJSON)) with \(JSONText.of(instance))")
                }
                continue
            }
            if ours != (verdicts[i] == "1") {
                disagreements.append("ours \(ours): \(JSONText.of(schemaJSON)) on \(JSONText.of(instance))")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements:\n\(disagreements.prefix(10).joined(separator: "\n"))")
        // Both verdicts occur often enough for the agreement to mean something.
        #expect(valid > 1_000 && valid < 9_000, "\(valid) valid")
        #expect(oracleFailed < 100, "jsonschema raised on \(oracleFailed) pairs")
        #expect(walked > 1_000, "the walk decided \(walked) pairs")
        if JSONNormalizer.fastPathAvailable { #expect(vouched > 1_000, "the normalizer vouched for \(vouched) pairs") }
        print("jsonschema agreement: \(pairs.count - oracleFailed - disagreements.count) of \(pairs.count - oracleFailed) pairs compared "
              + "(\(oracleFailed) it raised on), \(valid) valid, \(walked) decided by the walk, \(vouched) vouched for by the normalizer")
    }
}

/// JSON text of a value (compact), for the oracle's input and messages.
enum JSONText {
    static func of(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n
        case .string(let s): quoted(s)
        case .array(let items): "[" + items.map(of).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { quoted($0.0) + ":" + of($0.1) }.joined(separator: ",") + "}"
        }
    }

    static func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// Seeded schemas and instances over a small alphabet, so that keywords meet values they
/// decide on. Numbers are integers and halves: exact in a double, as Python reads them.
struct PairGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next(_ n: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(n))
    }

    mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }

    static let keys = ["a", "b", "c"]
    static let strings = ["", "a", "ab", "b1", "aab", "ba", "é"]

    mutating func number() -> JSONValue { .number(pick(["0", "1", "2", "3", "-1", "4", "1.5", "2.0", "6", "10"])) }

    mutating func instance(depth: Int) -> JSONValue {
        switch next(depth > 0 ? 7 : 5) {
        case 0: return .null
        case 1: return .bool(next(2) == 0)
        case 2: return number()
        case 3, 4: return .string(pick(Self.strings))
        case 5: return .array((0..<next(4)).map { _ in instance(depth: depth - 1) })
        default:
            var members: [(String, JSONValue)] = []
            for key in Self.keys where next(2) == 0 { members.append((key, instance(depth: depth - 1))) }
            return .object(members)
        }
    }

    mutating func schemas(_ depth: Int) -> JSONValue { .array((0..<(1 + next(3))).map { _ in schema(depth: depth - 1) }) }

    mutating func schema(depth: Int) -> JSONValue {
        if depth <= 0 || next(8) == 0 { return next(5) == 0 ? .bool(next(2) == 0) : .object([keyword(depth: 0)]) }
        var members: [(String, JSONValue)] = []
        for _ in 0..<(1 + next(3)) {
            let (name, value) = keyword(depth: depth)
            if !members.contains(where: { $0.0 == name }) { members.append((name, value)) }
        }
        return .object(members)
    }

    mutating func keyword(depth: Int) -> (String, JSONValue) {
        let count = JSONValue.number(String(next(4)))
        switch next(depth > 0 ? 32 : 17) {
        case 0: return ("type", .string(pick(["null", "boolean", "object", "array", "number", "string", "integer"])))
        case 1: return ("type", .array([.string(pick(["string", "integer"])), .string(pick(["null", "array", "object"]))]))
        case 2: return ("enum", .array((0..<(1 + next(3))).map { _ in instance(depth: 1) }))
        case 3: return ("const", instance(depth: 1))
        case 4: return ("required", .array(Self.keys.filter { _ in next(2) == 0 }.map { .string($0) }))
        case 5: return (pick(["minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength"]), count)
        case 6: return ("uniqueItems", .bool(next(3) != 0))
        case 7: return (pick(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), number())
        case 8: return ("multipleOf", .number(pick(["1", "2", "3", "0.5", "1.5"])))
        case 9: return ("pattern", .string(pick(["^a", "b$", "[0-9]", "^$", "a+b", "^.$"])))
        case 10: return ("dependentRequired", .object([(pick(Self.keys), .array([.string(pick(Self.keys))]))]))
        case 11: return ("minContains", count)
        case 12: return ("maxContains", count)
        case 13, 14, 15, 16: return ("type", .string(pick(["object", "array", "string", "number"])))
        case 17: return ("properties", .object(Self.keys.filter { _ in next(2) == 0 }.map { ($0, schema(depth: depth - 1)) }))
        case 18: return ("additionalProperties", schema(depth: depth - 1))
        case 19: return ("items", schema(depth: depth - 1))
        case 20: return ("prefixItems", schemas(depth))
        case 21: return ("contains", schema(depth: depth - 1))
        case 22: return ("allOf", schemas(depth))
        case 23: return ("anyOf", schemas(depth))
        case 24: return ("oneOf", schemas(depth))
        case 25: return ("not", schema(depth: depth - 1))
        case 26: return ("if", schema(depth: depth - 1))
        case 27: return (pick(["then", "else"]), schema(depth: depth - 1))
        case 28: return ("dependentSchemas", .object([(pick(Self.keys), schema(depth: depth - 1))]))
        case 29: return ("propertyNames", schema(depth: depth - 1))
        case 30: return ("unevaluatedProperties", schema(depth: depth - 1))
        default: return ("unevaluatedItems", schema(depth: depth - 1))
        }
    }
}
