import Foundation
@testable import Serializers
import TestSupport
import Testing

/// The C fast path (`json_fast.c`) where it differs in kind from the Swift normalizer: it
/// works in 64-byte blocks and 4 KiB chunks and carries state across both, so every token
/// kind is placed at each offset around those edges; it drops whitespace before it checks
/// the grammar, so whitespace inside a scalar must still be refused; and it rewrites
/// escapes in place, moving the output after them. Each case is held to the bytewise
/// Swift normalizer by `JSONByteScanTests.expectAgreement`.
@Suite struct JSONFastPathTests {
    let agreement = JSONByteScanTests()

    /// The CPU check picks the kernel `/proc/cpuinfo` says this CPU runs well: a build that
    /// lost the fast path (a CPU check gone wrong) fails here rather than only running slower.
    @Test func runsOnThisMachine() throws {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        guard let flags = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return }
        let set = Set(flags.split(separator: " ").map(String.init))
        // AMD before Zen 3 (family 0x19) runs PEXT in microcode: the fast path stays off there.
        let family = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("cpu family") })
            .flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0
        let pextInHardware = !cpuinfo.contains("AuthenticAMD") || family >= 0x19
        let avx2 = set.isSuperset(of: ["avx2", "bmi1", "bmi2", "pclmulqdq", "popcnt"])
        let avx512 = set.isSuperset(of: ["avx512f", "avx512bw", "avx512vl", "avx512_vbmi2"])
        #expect(JSONNormalizer.fastKernel == (!avx2 || !pextInHardware ? 0 : avx512 ? 2 : 1))
    }

    static let valid = [
        "\"a\\/b\\u00e9\\ud83d\\ude00\\u001F\\u001f\\u0022\\u005c\\u000A\\u0041\"",
        "\"\\\\\\\"\\b\\f\\n\\r\\t\"",
        "\"" + String(repeating: "lorem ipsum é 名前 😀 ", count: 12) + "\"",
        "-12.5e+3", "0", "-0.0E-0", "123456789012345678901234567890123456789.5", "true", "false", "null",
        "-0", "0.5", "-10.25", "7", "-7", "90",
        "[[{}],{\"k\":[]},[]]", "{\"a\" : { \"b\" :\t[ 1 , 2 ]\n}\r}",
        "{\"\\u0041\\/\":\"\\/\",\"\\\\\":\"\\\"\"}", "[\"\",\"\"]", "{\"\":\"\"}",
    ]

    static let invalid = [
        "1 2", "1. 5", "tr ue", "1\n2", "- 1", "\"a\" \"b\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\ud800\\u0041\"",
        "\"\\x\"", "\"a\tb\"", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[1}", "{]", "01", "1.", ".5", "1e", "+1", "\u{1A}", "\u{0C}",
        "nul", "truex", "true\u{0}", "nul\u{0}", "null\u{0}", "false\u{0}", "\u{0}", "fals", "nulll", "\"\\", "\"abc", "\u{FEFF}1", "\"\"\\\"", "\"a\"\\\"b\"", "1\\",
        "-", "-.5", "0.", "00", "-01", "01.5", "1.2.3", "1..2", "--1", "1-", "1.5-", "0x1", "1.e5", "-e1",
        // Tokens that touch: the walk takes what lies between two structural bytes as one.
        "\"a\"\"b\"", "\"a\"1", "1\"a\"", "\"a\"true", "\"a\" 1", "1 \"a\"", "\"a\"x\"b\"", "\"\"\"\"",
        "{\"a\"\"b\":1}", "{\"a\"1:2}", "{1:2}", "{\"a\":\"b\"\"c\"}", "{\"a\":1\"c\"}", "{\"a\" \"b\":1}",
        // Escapes stage 1 checks and does not list.
        "\"\\a\"", "\"\\U0041\"", "\"\\'\"", "\"\\ \"", "\"\\é\"", "\"\\0\"", "\"\\u\"",
    ]

    /// Each token, valid and not, at every offset within 40 bytes of a block or chunk edge,
    /// after padding of each kind (spaces, a string, array elements).
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func everyTokenAtEveryEdge() {
        let edges = [64, 4096, 8192]
        for edge in edges {
            for offset in (edge - 40)...(edge + 40) {
                for (k, token) in (Self.valid + Self.invalid).enumerated() {
                    let pad: String
                    switch (offset + k) % 3 {
                    case 0: pad = "[" + String(repeating: " ", count: max(offset - 1, 0))
                    case 1: pad = "[\"" + String(repeating: "p", count: max(offset - 4, 0)) + "\","
                    default: pad = "[" + String(repeating: "7,", count: max(offset - 1, 0) / 2) + (offset % 2 == 0 ? " " : "")
                    }
                    agreement.expectAgreement(Array((pad + token + "," + token + "]").utf8))
                }
            }
        }
    }

    /// Long documents: many escapes that need rewriting (each moves the output after it),
    /// strings and whitespace runs longer than a chunk, and one byte broken anywhere.
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func longDocumentsWithRewritesAndOneBrokenByte() {
        var rng = SplitMix(state: 0xFA57)
        let pieces = ["\"\\/\"", "\"\\u00e9x\"", "\"\\ud83d\\ude00\"", "\"plain\"", "12.5", "[]", "{\"k\":\"\\n\"}", "\"é\"",
                      String(repeating: " ", count: 5000) + "1", "\"" + String(repeating: "q", count: 9000) + "\""]
        for round in 0..<60 {
            var text = "["
            for j in 0..<(200 + rng.below(800)) {
                if j > 0 { text += rng.below(4) == 0 ? " ,\n  " : "," }
                text += pieces[rng.below(pieces.count)]
            }
            text += "]"
            var bytes = Array(text.utf8)
            agreement.expectAgreement(bytes)
            if round % 2 == 0 {
                bytes[rng.below(bytes.count)] = JSONByteScanTests.runEnders[rng.below(JSONByteScanTests.runEnders.count)]
                agreement.expectAgreement(bytes)
            }
        }
    }

    /// More escapes to rewrite than the fast path keeps on its stack (it lists them apart,
    /// growing the list on the heap), and an invalid one far down that list.
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func escapesPastTheStackList() {
        let strings = (0..<3000).map { i in ["\"\\/\"", "\"a\\u00e9b\\/\"", "\"\\ud83d\\ude00\\u0041\""][i % 3] }
        agreement.expectAgreement(Array(("[" + strings.joined(separator: ",") + "]").utf8))
        var broken = strings
        broken[2500] = "\"\\ud83d\\u0041\""
        agreement.expectAgreement(Array(("[" + broken.joined(separator: ",") + "]").utf8))
    }

    /// The options it reads: the depth limit at and past its edge, and fragments refused.
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func depthAndFragments() {
        for depth in [1, 2, 63, 64, 65, 600, 1500] {
            let nested = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            for limit in [64, 512, 1024, 2000] {
                agreement.expectAgreement(nested, JSONReadOptions(allowFragments: true, maxDepth: limit))
            }
        }
        for text in ["1", "\"s\"", " true ", "{}", " [1] ", "null"] {
            agreement.expectAgreement(Array(text.utf8), JSONReadOptions(allowFragments: false))
        }
    }

    /// Input that is already normalized, with room to spare, is its own output (the same
    /// storage); anything to remove or rewrite gives a new array; a final newline leaves a
    /// prefix of the input; the input's bytes are never written.
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func alreadyNormalizedInputIsItsOwnOutput() throws {
        let compact = "{\"a\":[1,-2.5e3,true,null,\"x\\n\\\"y\",{}],\"é\":\"東京\"}"
        let long = "[" + Array(repeating: compact, count: 300).joined(separator: ",") + "]"
        let cases: [(text: String, sameStorage: Bool, output: String)] = [
            (compact, true, compact),
            (long, true, long),
            (compact + "\n", false, compact),
            (compact + " \r\n\t", false, compact),
            (long + "\n", false, long),
            ("{\"a\": 1}", false, "{\"a\":1}"),
            (long.replacingOccurrences(of: "東京", with: "\\u6771京"), false, long),
            ("[\"\\/\"]", false, "[\"/\"]"),
        ]
        for kernel in stride(from: 1, through: JSONNormalizer.fastKernel, by: 1) {
            for (text, sameStorage, output) in cases {
                var input = Array(text.utf8)
                input.reserveCapacity(input.count + 64)
                let before = input
                let out = try #require(JSONNormalizer.fastNormalizeUTF8(input, from: 0, options: .init(), kernel: kernel))
                #expect(String(decoding: out, as: UTF8.self) == output, "kernel \(kernel): \(text.prefix(80))")
                let shared = input.withUnsafeBufferPointer { i in out.withUnsafeBufferPointer { $0.baseAddress == i.baseAddress } }
                #expect(shared == sameStorage, "kernel \(kernel): \(text.prefix(80))")
                #expect(input == before)
                // Without room (or when asked not to), always a new array.
                let written = try #require(JSONNormalizer.fastNormalizeUTF8(input, from: 0, options: .init(), kernel: kernel, inPlace: false))
                #expect(written == out)
                #expect(!input.withUnsafeBufferPointer { i in written.withUnsafeBufferPointer { $0.baseAddress == i.baseAddress } })
            }
        }
    }

    /// The output through `normalize` is the Swift path's on valid input, and invalid input
    /// still gets the Swift path's error and offset.
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU")) func errorsStillComeFromTheSwiftPath() throws {
        let bad = Array(("[" + String(repeating: "1,", count: 5000) + "1 2]").utf8)
        do {
            _ = try JSONNormalizer.normalize(bad)
            Issue.record("accepted whitespace inside a number")
        } catch {
            #expect(error.offset == 10_003)
        }
    }
}
