@testable import Serializers
import Testing

@Suite struct JSONWriterTests {
    func canonical(_ text: String) throws -> String {
        String(decoding: try JSONValue.parse(text).encoded(canonical: true), as: UTF8.self)
    }

    @Test func canonicalSortsKeysByUTF16CodeUnits() throws {
        // RFC 8785 §3.2.3's example order: "\r" < "1" < "\u0080" < "ö" < "€" < "😀" < "ﬂ" (U+FB02).
        let text = "{\"€\":1,\"\\r\":2,\"ﬂ\":3,\"1\":4,\"😀\":5,\"\u{80}\":6,\"ö\":7}"
        #expect(try canonical(text) == "{\"\\r\":2,\"1\":4,\"\u{80}\":6,\"ö\":7,\"€\":1,\"😀\":5,\"ﬂ\":3}")
    }

    @Test(arguments: [
        ("0", "0"), ("-0", "0"), ("1.0", "1"), ("1e2", "100"), ("1E21", "1e+21"), ("1e20", "100000000000000000000"),
        ("0.000001", "0.000001"), ("1e-7", "1e-7"), ("123.456e3", "123456"), ("9007199254740993", "9007199254740992"),
        ("4.50", "4.5"), ("-1.5e-10", "-1.5e-10"), ("333333333.33333329", "333333333.3333333"),
        ("1e+23", "1e+23"), ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ])
    func canonicalNumbersFollowECMAScript(lexeme: String, expected: String) throws {
        #expect(try CanonicalNumber.format(lexeme) == expected)
    }

    @Test func canonicalRejectsNumbersOutsideDoubleRange() {
        #expect(throws: JSONError.self) { try CanonicalNumber.format("1e400") }
    }

    @Test func canonicalKeepsTheLastOfRepeatedKeys() throws {
        #expect(try canonical(#"{"b":1,"a":2,"b":3}"#) == #"{"a":2,"b":3}"#)
    }

    @Test func plainWriterKeepsOrderAndLexemes() throws {
        let value = JSONValue.object([("z", .number("1.50")), ("a", .array([.string("x/y"), .null, .bool(false)]))])
        #expect(String(decoding: try value.encoded(), as: UTF8.self) == #"{"z":1.50,"a":["x/y",null,false]}"#)
    }

    @Test func parseRoundTripsThroughTheTree() throws {
        let text = #"{"a":[1,{"b":"\n\u0001é"}],"c":true,"d":null,"e":-2.5E3}"#
        let value = try JSONValue.parse(text)
        #expect(value["a"]?[1]?["b"] == .string("\n\u{01}é"))
        #expect(String(decoding: try value.encoded(), as: UTF8.self) == text)
    }

    /// Repeated key hashes are found in small dictionaries (pairs) and large ones (a set),
    /// with a zero hash, and with hashes equal in the low bits the set indexes by.
    @Test func repeatedKeyHashesAreFoundAtEverySize() {
        func repeats(_ keys: [UInt64]) -> Bool {
            var keys = keys
            return keys.withUnsafeMutableBufferPointer { RepeatedKeys.repeats($0) }
        }
        for n in [2, 16, 17, 40, 300] {
            let distinct = (1...UInt64(n)).map { $0 << 40 | 7 }
            #expect(!repeats(distinct), "\(n) distinct")
            #expect(repeats(distinct + [distinct[n / 2]]), "\(n) with a repeat")
            #expect(!repeats([0] + distinct), "\(n) and a zero")
            #expect(repeats([0] + distinct + [0]), "\(n) and two zeros")
        }
    }
}
