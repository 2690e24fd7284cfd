@testable import Serializers
import TestSupport
import Testing

@Suite struct PlistTranscoderTests {
    static let expected = #"{"name":"A & B","count":-42,"ratio":3.25,"ok":true,"off":false,"when":"2024-01-02T03:04:05Z","blob":"aGVsbG8=","list":[1,"x",{}],"unicode":"héllo ☃ 😀","big":1099511627776,"neg":-1099511627776}"#

    @Test func xmlPropertyListWithAppleDoctypeParses() throws {
        #expect(try PlistTranscoder.transcode(try Fixture.bytes("plist/sample.plist")).text == Self.expected)
    }

    @Test func binaryPropertyListParses() throws {
        #expect(try PlistTranscoder.transcode(try Fixture.bytes("plist/sample.bplist")).text == Self.expected)
    }

    @Test func serializerHandles204WithEmptyBody() throws {
        let s = try makeSerializer("plist")
        let result = s.serialize(UpstreamResponse(status: 204, contentType: "application/x-plist", body: []))
        #expect(result.error == nil && result.text == "null")
    }

    @Test func serializerRequiresThePlistContentType() throws {
        let s = try makeSerializer("plist")
        let body = try Fixture.bytes("plist/sample.plist")
        #expect(s.serialize(UpstreamResponse(status: 200, contentType: "application/x-plist", body: body)).succeeded)
        #expect(s.serialize(UpstreamResponse(status: 200, contentType: "text/plain", body: body)).error?.code == -1016)
    }

    @Test func datesWithFractionsAndBeforeTheReferenceDate() throws {
        #expect(try PlistScalars.isoDate(secondsSince2001: 0) == "2001-01-01T00:00:00Z")
        #expect(try PlistScalars.isoDate(secondsSince2001: -978_307_200) == "1970-01-01T00:00:00Z")
        #expect(try PlistScalars.isoDate(secondsSince2001: 1.5) == "2001-01-01T00:00:01.5Z")
        #expect(try PlistScalars.isoDate(secondsSince2001: 730_000_000) == "2024-02-19T01:46:40Z")
    }

    @Test func truncatedBinaryPlistFails() throws {
        let body = try Fixture.bytes("plist/sample.bplist")
        for cut in [8, 20, body.count / 2, body.count - 1] {
            #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(Array(body.prefix(cut))) }
        }
    }

    @Test func selfReferencingBinaryPlistFails() throws {
        // One array (object 0) whose single element is itself.
        var body = Array("bplist00".utf8) + [0xA1, 0x00]
        let table = body.count
        body += [8]
        body += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
        body += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(body) }
    }

    /// One array of integers, one object each: every size the format has, unsigned below
    /// 8 bytes, two's complement at 8, and the low half of 16.
    @Test func binaryIntegersOfEverySize() throws {
        let integers: [[UInt8]] = [
            [0x10, 0x00], [0x10, 0xFF], [0x11, 0xFF, 0xFF], [0x12, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x13, 0x80, 0, 0, 0, 0, 0, 0, 0],
            [0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x13, 0, 0, 0, 0, 0, 0, 0x30, 0x39],
            [0x14] + [UInt8](repeating: 0xFF, count: 15) + [0xFB], [0x14] + [UInt8](repeating: 0, count: 15) + [0x2A],
        ]
        var body = Array("bplist00".utf8) + [0xA0 | UInt8(integers.count)] + (1...integers.count).map { UInt8($0) }
        var offsets = [UInt8(8)]
        for integer in integers {
            offsets.append(UInt8(body.count))
            body += integer
        }
        let table = body.count
        body += offsets
        body += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(offsets.count)] + [0, 0, 0, 0, 0, 0, 0, 0]
        body += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        #expect(try PlistTranscoder.transcode(body).text
            == "[0,255,65535,4294967295,-1,-9223372036854775808,9223372036854775807,12345,-5,42]")
    }

    @Test(arguments: [
        "<plist><dict><key>a</key></dict></plist>", "<plist><dict><string>x</string></dict></plist>",
        "<plist><integer>12x</integer></plist>", "<plist><date>yesterday</date></plist>", "<plist><foo/></plist>",
        "<plist><data>!!</data></plist>", "<plist></plist>", "<dict/>", "<plist><real>nan</real></plist>",
    ])
    func malformedXMLPlistsFail(input: String) {
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(Array(input.utf8)) }
    }

    @Test func xmlPlistScalarsNormalize() throws {
        let text = "<plist><array><integer>007</integer><integer>-0</integer><real>1.</real><real>2.5e3</real></array></plist>"
        #expect(try PlistTranscoder.transcode(Array(text.utf8)).text == "[7,0,1.0,2.5e3]")
    }
}

/// Bounded work (DESIGN §5): shared references are expanded, but never past the output bound.
@Suite struct BinaryPlistExpansionTests {
    @Test func sharedReferencesAreExpanded() throws {
        #expect(try PlistTranscoder.transcode(try Fixture.bytes("plist/shared-references.bplist")).text == "[[[1,1],[1,1]],[[1,1],[1,1]]]")
    }

    @Test func aReferenceDAGFailsAtTheOutputBoundInsteadOfExpanding() throws {
        let bomb = try Fixture.bytes("plist/reference-dag.bplist")   // 2^40 leaves from 41 objects
        #expect(bomb.count < 300)
        do throws(TranscodeError) {
            _ = try PlistTranscoder.transcode(bomb)
            Issue.record("the expansion was not bounded")
        } catch {
            #expect(error.description == "shared object references expanded to JSON would exceed \(bomb.count * 8 + (1 << 20)) bytes, the bound for a \(bomb.count)-byte body (8 bytes per input byte plus 1 MiB)")
        }
        // Under a smaller cap, the cap is what is named.
        do throws(TranscodeError) {
            _ = try PlistTranscoder.transcode(bomb, budget: OutputBudget(input: bomb.count, cap: 4096))
            Issue.record("the expansion was not bounded")
        } catch {
            #expect(error.description == "shared object references expanded to JSON would exceed 4096 bytes, the output cap (limits.max_response_body)")
        }
    }

    @Test func theBoundIsLinearInTheInputAndCapped() {
        #expect(OutputBudget(input: 291).limit == 291 * 8 + (1 << 20))
        #expect(OutputBudget(input: 30 << 20).limit == 32 << 20)
        #expect(OutputBudget(input: Int.max).limit == 32 << 20)
        #expect(OutputBudget(input: 10, cap: 5).limit == 5)
    }
}

@Suite struct BinaryPlistRegressionTests {
    /// Found by fuzz/plist: an 8-byte object offset above Int.max trapped instead of failing.
    @Test func anOffsetBeyondIntIsOutOfRangeNotATrap() throws {
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(try Fixture.bytes("plist/regression-offset-overflow.bplist")) }
    }

    /// Found by fuzz/plist: a trailer whose offset-table position plus its size overflowed 64 bits trapped.
    @Test func aTrailerNearTheTopOfUInt64IsOutOfBoundsNotATrap() throws {
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(try Fixture.bytes("plist/regression-trailer-overflow.bplist")) }
    }
}

@Suite struct BinaryPlistSharedDepthTests {
    /// A shared container copied from where it was first written still counts its own
    /// nesting where it is copied to: the depth limit holds as if it were walked again.
    @Test func aCopiedContainerIsHeldToTheDepthWhereItIsCopied() throws {
        let bytes = try Fixture.bytes("plist/shared-at-two-depths.bplist")
        #expect(try PlistTranscoder.transcode(bytes, maxDepth: 7).text == "[[[[7]]],[[[[[7]]]]]]")
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(bytes, maxDepth: 6) }
    }

    /// A binary plist of `objects` (raw, in order; object 0 the top), with 2-byte
    /// references and offsets.
    static func binaryPlist(_ objects: [[UInt8]]) -> [UInt8] {
        var body = Array("bplist00".utf8), offsets: [UInt8] = []
        for object in objects {
            offsets += [UInt8(body.count >> 8), UInt8(body.count & 0xFF)]
            body += object
        }
        let table = body.count
        body += offsets + [0, 0, 0, 0, 0, 0, 2, 2]
        for field in [objects.count, 0, table] { body += (0..<8).reversed().map { UInt8(truncatingIfNeeded: field >> ($0 * 8)) } }
        return body
    }

    static func references(_ objects: [Int]) -> [UInt8] { objects.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }

    /// A dictionary of n keys, written with a count byte (n >= 15) where it needs one.
    static func dictionary(keys: [Int], values: [Int]) -> [UInt8] {
        let head: [UInt8] = keys.count < 15 ? [0xD0 | UInt8(keys.count)] : [0xDF, 0x10, UInt8(keys.count)]
        return head + references(keys) + references(values)
    }

    /// The last of a repeated key wins whatever the writer did: one key object referenced
    /// twice, or two objects of the same text, in a small dictionary (pairs compared) and
    /// in one past 16 keys (hashes sorted).
    @Test func repeatedBinaryKeysKeepTheLast() throws {
        let ascii = { (text: String) -> [UInt8] in [0x50 | UInt8(text.utf8.count)] + Array(text.utf8) }
        let int = { (value: UInt8) -> [UInt8] in [0x10, value] }
        // One object referenced twice: objects 1 "a", 2 "b", 3...5 values.
        let shared = Self.binaryPlist([Self.dictionary(keys: [1, 2, 1], values: [3, 4, 5]), ascii("a"), ascii("b"), int(1), int(2), int(3)])
        #expect(try PlistTranscoder.transcode(shared).text == #"{"b":2,"a":3}"#)
        // 20 distinct keys k0...k19 (objects 1...20), then "k3" again as object 21; values 22...42.
        let keys = (0..<20).map { ascii("k\($0)") } + [ascii("k3")]
        let values = (0..<21).map { int(UInt8($0)) }
        let large = Self.binaryPlist([Self.dictionary(keys: Array(1...21), values: Array(22...42))] + keys + values)
        let members = (0..<20).filter { $0 != 3 }.map { "\"k\($0)\":\($0)" } + [#""k3":20"#]
        #expect(try PlistTranscoder.transcode(large).text == "{" + members.joined(separator: ",") + "}")
        // The same 20 without the repeat: kept as they are (no rebuild, nothing lost).
        let distinct = Self.binaryPlist([Self.dictionary(keys: Array(1...20), values: Array(22...41))] + keys + values)
        let all = (0..<20).map { "\"k\($0)\":\($0)" }
        #expect(try PlistTranscoder.transcode(distinct).text == "{" + all.joined(separator: ",") + "}")
    }

    /// UTF-16 strings, as values and as keys: the BMP, a surrogate pair, a byte order mark
    /// (dropped), escapes; a lone surrogate fails with where it is.
    @Test func utf16StringsDecodeAsValuesAndKeys() throws {
        let utf16 = { (text: String) -> [UInt8] in
            let units = Array(text.utf16)
            let head: [UInt8] = units.count < 15 ? [0x60 | UInt8(units.count)] : [0x6F, 0x10, UInt8(units.count)]
            return head + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        let plist = Self.binaryPlist([Self.dictionary(keys: [1, 2], values: [3, 4]), utf16("cl\u{E9}"), utf16("\u{1F600}\"q"),
                                      utf16("\u{FEFF}\u{4E2D}\u{6587}\n"), utf16("a\u{0}b")])
        #expect(try PlistTranscoder.transcode(plist).text == #"{"cl\#u{E9}":"\#u{4E2D}\#u{6587}\n","\#u{1F600}\"q":"a\u0000b"}"#)
        let lone = Self.binaryPlist([[0x61, 0xD8, 0x3D]])
        #expect(throws: TranscodeError.self) { try PlistTranscoder.transcode(lone) }
        #expect(BinaryPlistReader.utf8(fromUTF16BEForTesting: [0xD8, 0x3D, 0x00, 0x41]) == nil)
        #expect(BinaryPlistReader.utf8(fromUTF16BEForTesting: [0xDC, 0x00]) == nil)
        #expect(BinaryPlistReader.utf8(fromUTF16BEForTesting: [0xFE, 0xFF, 0x00, 0x41, 0xFE, 0xFF]) == [0x41, 0xEF, 0xBB, 0xBF])
    }
}
