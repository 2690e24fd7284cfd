@testable import Serializers
import TestSupport
import Testing

/// The normalizer's vector inner loops against its portable bytewise ones: on every
/// document, every prefix of it (so each cut falls at each place in a 16-byte step and in
/// the bytewise tail), and every document with one byte replaced by a byte that ends a
/// run (quote, backslash, control, non-ASCII, a broken UTF-8 lead), the two give the same
/// output or the same error at the same offset.
@Suite struct JSONByteScanTests {
    static let runEnders: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x09, 0x0A, 0x20, 0x7F, 0x80, 0xC3, 0xE2, 0xF0, 0xFF, 0x2C, 0x2E, 0x65, 0x30, 0x39]

    func outcome<S: JSONByteScan>(_ input: [UInt8], _ options: JSONReadOptions, _ scan: S.Type) -> String {
        do throws(JSONError) {
            return "ok " + String(decoding: try JSONNormalizer.normalizeUTF8(input, from: 0, options: options, scan: scan), as: UTF8.self)
        } catch {
            return "error " + error.description
        }
    }

    func expectAgreement(_ input: [UInt8], _ options: JSONReadOptions = .init(allowFragments: true)) {
        let vector = outcome(input, options, VectorScan.self)
        let bytewise = outcome(input, options, ByteScan.self)
        #expect(vector == bytewise, "\(String(decoding: input, as: UTF8.self))")
        guard !options.removeNullValues else { return }
        // The C fast path says only valid or not: valid with the same bytes, or invalid.
        // Every kernel this machine runs (AVX2, and AVX-512 where present).
        // Each with its output written, and read in place from an input with room to spare
        // (already normalized input then comes back as itself).
        var roomy = input
        roomy.reserveCapacity(input.count + 64)
        for kernel in stride(from: 1, through: JSONNormalizer.fastKernel, by: 1) {
            for (bytes, inPlace) in [(input, false), (roomy, true)] {
                let fast = JSONNormalizer.fastNormalizeUTF8(bytes, from: 0, options: options, kernel: kernel, inPlace: inPlace)
                    .map { "ok " + String(decoding: $0, as: UTF8.self) }
                #expect(fast == (bytewise.hasPrefix("ok ") ? bytewise : nil),
                        "fast path, kernel \(kernel), in place \(inPlace): \(String(decoding: input.prefix(300), as: UTF8.self))")
            }
        }
        #expect(roomy == input)
    }

    static let documents: [String] = [
        "{\"name\": \"lorem ipsum dolor sit amet, consectetur\",   \"n\": [12345678901234567890, -0.000001e+23, 7],\n        \"text\": \"名前:前田あゆみ 第一印象:なんか怖っ！😋✨ and ascii after\"}",
        "[\n                                        \"a\\u00e9\\n\\\"\\\\\\/b\", 1.5, true, false, null,\n\t\t\t\t\t\t\t\t\t\t{ \"k\" :\r\n  \"v\" } ]",
        "[-65.613616999999977,43.420273000000009,-65.619720000000029,43.418052999999986,-65.625,43.421379000000059]",
        "\"" + String(repeating: "0123456789abcdef", count: 5) + "é" + String(repeating: "x", count: 15) + "\"",
        "[" + String(repeating: " ", count: 70) + "1" + String(repeating: "\n", count: 33) + "]",
        "{\"d\": " + String(repeating: "9", count: 40) + "." + String(repeating: "0", count: 33) + "E-" + String(repeating: "1", count: 17) + "}",
    ]

    @Test func everyPrefixAgrees() {
        for document in Self.documents {
            let bytes = Array(document.utf8)
            for cut in 0...bytes.count { expectAgreement(Array(bytes[..<cut])) }
        }
    }

    @Test func everyReplacedByteAgrees() {
        for document in Self.documents {
            let bytes = Array(document.utf8)
            for at in bytes.indices {
                for ender in Self.runEnders where ender != bytes[at] {
                    var changed = bytes
                    changed[at] = ender
                    expectAgreement(changed)
                }
            }
        }
    }

    @Test func randomDocumentsAgreeWithAndWithoutNulls() {
        var rng = SplitMix(state: 0x5CA7)
        let generator = JSONNormalizerDifferentialTests()
        for _ in 0..<300 {
            let bytes = Array(generator.value(&rng, depth: 0).utf8)
            expectAgreement(bytes)
            expectAgreement(bytes, JSONReadOptions(removeNullValues: true, allowFragments: true))
        }
    }

    /// The vector loops are in use: a long run of each kind is passed over in 16-byte steps
    /// and stops exactly at the byte that ends it, wherever in the step that byte falls.
    @Test func vectorRunsStopAtTheirEnd() {
        for length in 0..<40 {
            let spaces = [UInt8](repeating: 0x20, count: length) + Array("x".utf8) + [UInt8](repeating: 0x20, count: 20)
            var i = 0
            spaces.withUnsafeBufferPointer { VectorScan.skipWhitespace($0.baseAddress!, $0.count, &i) }
            #expect(i == length)

            let digits = [UInt8](repeating: 0x37, count: length) + Array("e".utf8) + [UInt8](repeating: 0x31, count: 20)
            i = 0
            digits.withUnsafeBufferPointer { VectorScan.skipDigits($0.baseAddress!, $0.count, &i) }
            #expect(i == length)

            for stop: UInt8 in [0x22, 0x5C, 0x1F, 0x80, 0xFF] {
                let text = [UInt8](repeating: 0x61, count: length) + [stop] + [UInt8](repeating: 0x61, count: 20)
                var out = [UInt8](repeating: 0, count: text.count)
                var w = 0
                i = 0
                text.withUnsafeBufferPointer { t in
                    out.withUnsafeMutableBufferPointer { VectorScan.copyPlain(t.baseAddress!, t.count, &i, $0.baseAddress!, &w) }
                }
                #expect(i == length && w == length && out[..<length].allSatisfy { $0 == 0x61 })
            }
        }
    }

    /// A number's digit runs found from one mask of its first 32 bytes end where the
    /// bytewise scan ends them: runs inside the mask, at its edge, and past it.
    @Test func digitRunsEndWhereBytewiseRunsEnd() {
        var rng = SplitMix(state: 0xD161)
        for _ in 0..<5000 {
            let bytes = (0..<1 + rng.below(72)).map { _ in rng.below(6) == 0 ? UInt8(ascii: ".") : UInt8(0x30 + rng.below(10)) }
            let begin = rng.below(bytes.count)
            let from = begin + rng.below(bytes.count - begin + 1)
            var vector = from, bytewise = from
            bytes.withUnsafeBufferPointer { b in
                VectorScan.digitRuns(b.baseAddress!, b.count, at: begin).skip(b.baseAddress!, b.count, &vector, VectorScan.self)
                ByteScan.skipDigits(b.baseAddress!, b.count, &bytewise)
            }
            #expect(vector == bytewise, "\(bytes) from \(begin), skipping at \(from)")
        }
    }

    /// The word form of UTF-8 sequence validation (used for runs of non-ASCII text in
    /// strings) agrees with the bytewise one on every lead and second byte, and on the
    /// boundary values of the third and fourth.
    @Test func wordSequenceLengthAgreesWithBytewise() {
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xE0, 0xFF]
        var checked = 0
        for b0 in UInt8(0x80)...0xFF {
            for b1 in UInt8(0)...0xFF {
                for b2 in edges {
                    for b3 in edges {
                        let bytes = [b0, b1, b2, b3]
                        let word = UInt32(b0) | UInt32(b1) << 8 | UInt32(b2) << 16 | UInt32(b3) << 24
                        let bytewise = bytes.withUnsafeBufferPointer { UTF8Validation.sequenceLength($0.baseAddress!, 0, 4) }
                        if UTF8Validation.sequenceLength(word: word) != bytewise {
                            Issue.record("\(bytes): word \(String(describing: UTF8Validation.sequenceLength(word: word))), bytewise \(String(describing: bytewise))")
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 128 * 256 * 144)
    }

    /// Strings of mixed 1–4 byte characters, some with one byte replaced by any value:
    /// wherever the vector loop stops in them, the two accept and refuse exactly the same
    /// strings, at the same offset.
    @Test func nonASCIITextAgreesWithOneByteBroken() {
        let characters = ["a", " ", "é", "ß", "€", "名", "前", "😀", "✨", "\\n", "\\u00e9", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}", "\u{D7FF}", "\u{E000}"]
        var rng = SplitMix(state: 0x0717)
        var broken = 0
        for _ in 0..<4000 {
            var bytes = Array(("\"" + (0..<rng.below(24)).map { _ in characters[rng.below(characters.count)] }.joined() + "\"").utf8)
            if bytes.count > 2 && rng.below(3) > 0 {
                bytes[1 + rng.below(bytes.count - 2)] = UInt8(truncatingIfNeeded: rng.next())
                broken += 1
            }
            expectAgreement(bytes + Array("   ".utf8))
            expectAgreement(Array("[".utf8) + bytes + Array(String(repeating: " ", count: 20).utf8) + Array("]".utf8))
        }
        #expect(broken > 2000)
    }
}
