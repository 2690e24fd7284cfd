import Foundation
@testable import Serializers
import TestSupport
import Testing

/// Random documents — nesting, indentation, escapes of every kind, non-ASCII, numbers —
/// normalized, then checked against Foundation's parser: same value before and after,
/// output compact (normalizing it again changes nothing).
@Suite struct JSONNormalizerDifferentialTests {
    static let pieces = ["a", "b", "lorem ipsum ", "é", "€", "😀", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u00e9", "\\u0001",
                         "\\ud83d\\ude00", "\\u20AC", "x y", "0123456789"]

    func space(_ rng: inout SplitMix) -> String {
        ["", "", " ", "\n  ", "\n\t", "   ", "\r\n"][rng.below(7)]
    }

    func string(_ rng: inout SplitMix) -> String {
        "\"" + (0..<rng.below(12)).map { _ in Self.pieces[rng.below(Self.pieces.count)] }.joined() + "\""
    }

    func value(_ rng: inout SplitMix, depth: Int) -> String {
        switch depth > 4 ? rng.below(4) : rng.below(7) {
        case 0: return string(&rng)
        case 1: return ["0", "-1", "3.25", "1e10", "-0.5E-3", "123456789012345678901234567890"][rng.below(6)]
        case 2: return ["true", "false", "null"][rng.below(3)]
        case 3: return string(&rng)
        case 4, 5:
            let members = (0..<rng.below(5)).map { _ in
                space(&rng) + string(&rng) + space(&rng) + ":" + space(&rng) + value(&rng, depth: depth + 1) + space(&rng)
            }
            return "{" + members.joined(separator: ",") + space(&rng) + "}"
        default:
            let elements = (0..<rng.below(5)).map { _ in space(&rng) + value(&rng, depth: depth + 1) + space(&rng) }
            return "[" + elements.joined(separator: ",") + space(&rng) + "]"
        }
    }

    @Test func randomDocumentsKeepTheirValue() throws {
        var rng = SplitMix(state: 0xD1FF)
        for _ in 0..<400 {
            let text = space(&rng) + (rng.below(2) == 0 ? "{\"k\":" + value(&rng, depth: 0) + "}" : "[" + value(&rng, depth: 0) + "]") + space(&rng)
            let input = Array(text.utf8)
            let output = try JSONNormalizer.normalize(input)
            // Foundation's own rendering, keys sorted, as the value's fingerprint.
            let fingerprint = { (bytes: [UInt8]) throws in
                try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: Data(bytes)), options: [.sortedKeys])
            }
            #expect(try fingerprint(input) == fingerprint(output), "\(text)")
            #expect(try JSONNormalizer.normalize(output) == output, "\(text)")
            #expect(!output.contains(UInt8(ascii: "\n")) && output.count <= input.count)
        }
    }
}
