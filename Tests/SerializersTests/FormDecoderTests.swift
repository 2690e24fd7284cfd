@testable import Serializers
import Testing

@Suite struct FormDecoderTests {
    func form(_ text: String, charset: String? = nil) throws -> String {
        NormalizedJSON(try FormDecoder.decode(Array(text.utf8), charset: charset)).text
    }

    @Test func designExampleDecodes() throws {
        #expect(try form("a=1&b[]=x&c[d]=y") == #"{"a":"1","b":["x"],"c":{"d":"y"}}"#)
    }

    @Test func percentEscapesAndPlusAreDecoded() throws {
        #expect(try form("q=a+b%20c%26d&k%5Bn%5D=%E2%98%83") == #"{"q":"a b c&d","k":{"n":"☃"}}"#)
    }

    @Test func bareKeyIsNullAndEmptyValueIsEmptyString() throws {
        #expect(try form("a&b=&&c") == #"{"a":null,"b":"","c":null}"#)
    }

    @Test func arraysOfObjectsFollowRack() throws {
        #expect(try form("g[][h]=1&g[][i]=2&g[][h]=3") == #"{"g":[{"h":"1","i":"2"},{"h":"3"}]}"#)
    }

    @Test func repeatedPlainKeyKeepsTheLastValue() throws {
        #expect(try form("a=1&a=2") == #"{"a":"2"}"#)
    }

    @Test func shapeConflictsAreErrors() {
        #expect(throws: TranscodeError.self) { try FormDecoder.decode(Array("a=1&a[b]=2".utf8)) }
        #expect(throws: TranscodeError.self) { try FormDecoder.decode(Array("a[]=1&a[b]=2".utf8)) }
    }

    @Test func badEscapesAndBadCharsetsFail() {
        #expect(throws: TranscodeError.self) { try FormDecoder.decode(Array("a=%zz".utf8)) }
        #expect(throws: TranscodeError.self) { try FormDecoder.decode(Array("a=%C3".utf8)) }
    }

    /// Found by fuzz/form (differential): brackets are found by byte, so a combining mark
    /// after one does not hide it (Swift's Character would join `[` and U+0617).
    @Test func bracketsAreFoundByByteNotByCharacter() throws {
        #expect(try form("a[%D8%97]=1&b[]%CC%81=2") == #"{"a":{"ؗ":"1"},"b[]́":"2"}"#)
    }

    @Test func charsetParameterIsHonoured() throws {
        #expect(try form("a=caf%E9", charset: "iso-8859-1") == #"{"a":"café"}"#)
    }

    @Test func roundTripsAFQueryEncoding() throws {
        let params: [(String, JSONValue)] = [("b", .array([.string("x"), .string("y z")])), ("a", .object([("n", .string("&"))]))]
        let encoded = QueryStringEncoder.encode(params)
        #expect(try form(encoded) == #"{"a":{"n":"&"},"b":["x","y z"]}"#)
    }
}

/// Bounded work (DESIGN §5): form keys nest at most `max_json_depth` levels.
@Suite struct FormDepthTests {
    func key(depth: Int) -> String { "a" + String(repeating: "[b]", count: depth - 1) }

    @Test func keysUpToTheDepthLimitDecode() throws {
        let value = try FormDecoder.decode(Array((key(depth: 64) + "=1").utf8), maxDepth: 64)
        var depth = 0
        var current = value
        while case .object(let members) = current, let first = members.first { depth += 1; current = first.1 }
        #expect(depth == 64 && current == .string("1"))
    }

    @Test func deeperKeysFailWithTheLimitNamed() {
        for depth in [65, 8000] {
            do throws(TranscodeError) {
                _ = try FormDecoder.decode(Array((key(depth: depth) + "=1").utf8), maxDepth: 64)
                Issue.record("a \(depth)-deep key was accepted")
            } catch {
                #expect(error.description == "form field starting at byte 0 nests \(depth) levels deep, deeper than the limit of 64 (limits.max_json_depth)")
            }
        }
    }

    @Test func arraysOfObjectsStillFollowRacksRuleAtDepth() throws {
        let text = "x[][a][c]=1&x[][a][d]=2&x[][a][c]=3"
        #expect(NormalizedJSON(try FormDecoder.decode(Array(text.utf8))).text == #"{"x":[{"a":{"c":"1","d":"2"}},{"a":{"c":"3"}}]}"#)
    }
}

/// The form table's key hash: every byte and the scope count, and nothing outside the key.
@Suite struct KeyHashTests {
    func hash(_ bytes: [UInt8], scope: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { KeyHash.hash($0, scope: scope) }
    }

    @Test func everyLengthAndEveryByteChangesTheHash() {
        let base = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        var seen: Set<UInt64> = []
        for length in 0...64 {
            let key = Array(base.prefix(length))
            #expect(seen.insert(hash(key)).inserted, "length \(length) collides")
            for k in 0..<length {
                var flipped = key
                flipped[k] ^= 0x01
                #expect(hash(flipped) != hash(key), "byte \(k) of \(length) is not hashed")
            }
        }
        #expect(hash(Array("k1".utf8), scope: 0) != hash(Array("k1".utf8), scope: 1))
    }

    @Test func bytesAroundTheKeyDoNotCount() {
        let a: [UInt8] = Array("xx-key-yy".utf8), b: [UInt8] = Array("zz-key-ww".utf8)
        let ha = a.withUnsafeBytes { KeyHash.hash(UnsafeRawBufferPointer(rebasing: $0[2..<7]), scope: 3) }
        let hb = b.withUnsafeBytes { KeyHash.hash(UnsafeRawBufferPointer(rebasing: $0[2..<7]), scope: 3) }
        #expect(ha == hb)
    }

    /// Many distinct tiny keys, as the bounded-work bench sends: every one kept, in order.
    @Test func manyDistinctKeysAllSurvive() throws {
        let text = (0..<20_000).map { "k\($0)" }.joined(separator: "&")
        guard case .object(let members) = try FormDecoder.decode(Array(text.utf8)) else { Issue.record("not an object"); return }
        #expect(members.count == 20_000 && members.first?.0 == "k0" && members.last?.0 == "k19999")
    }
}
