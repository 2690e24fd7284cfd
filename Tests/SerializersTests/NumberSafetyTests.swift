@testable import Serializers
import Testing

/// `output.numbers`' decision (DESIGN §5): the exact 128-bit check (json_fast.c, shared with
/// the JSON walk) and the shape shortcut against the reference (strtod, then Swift's
/// shortest print).
@Suite struct NumberSafetyTests {
    func safe(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { NumberSafety.isSafe($0) }
    }

    @Test func designsExamplesAreClassified() {
        for text in ["9007199254740993", "12345678901234567890", "9223372036854775808", "1e400", "-1e400", "2e-400",
                     "123456789012345678", "0.30000000000000004440892098500626", "-65.613616999999977"] {
            #expect(!safe(text), "\(text)")
        }
        for text in ["1.10", "0.1", "1e23", "-0", "0", "0.0e99", "9007199254740992", "505874924095815700", "5e-324",
                     "1.7976931348623157e308", "0.30000000000000004", "-65.613617", "100000000000000000000000"] {
            #expect(safe(text), "\(text)")
        }
    }

    /// Random 16- and 17-digit numbers at exponents where the exact check decides: the
    /// same answer as printing, and printing is rarely needed.
    @Test func theExactCheckAgreesWithPrinting() {
        var rng = SystemRandomNumberGenerator()
        var undecided = 0, unsafe = 0
        let trials = 200_000
        for n in 0..<trials {
            let digits = n % 2 == 0 ? 16 : 17
            let low: UInt64 = digits == 16 ? 1_000_000_000_000_000 : 10_000_000_000_000_000
            var m = UInt64.random(in: low..<(low * 10), using: &rng)
            if n % 3 == 0 { m = m / 1000 * 1000 + [1, 3, 7, 9][n % 4] }   // near round numbers
            let q = Int.random(in: -20...20, using: &rng)
            // Every form the parse meets: an exponent, a point inside the digits, leading
            // fraction zeros, a sign, trailing zeros.
            let plain = String(m)
            let cut = Int.random(in: 1..<plain.count, using: &rng)
            let pointed: String = String(plain.prefix(cut)) + "." + String(plain.dropFirst(cut))
            let forms: [String] = ["\(m)e\(q)", pointed, "0.000" + plain, "-" + plain + "000", "-" + pointed + "00e\(q / 2)"]
            let text = forms[n % forms.count]
            let verdict = text.utf8.withContiguousStorageIfAvailable { NumberSafety.exactCheck($0) }!
            let reference = text.utf8.withContiguousStorageIfAvailable { NumberSafety.isSafeByPrinting($0) }!
            switch verdict {
            case .undecided: undecided += 1
            case .safe: #expect(reference, "\(text) called safe")
            case .unsafe: #expect(!reference, "\(text) called unsafe")
            }
            if !reference { unsafe += 1 }
        }
        #expect(undecided < trials / 50, "\(undecided) undecided")
        #expect(unsafe > trials / 10 && unsafe < trials, "\(unsafe) unsafe")
    }
}

/// The JSON fast path decides numbers in C (json_fast.c): the same count as NumberSafety.
@Suite struct FastPathNumberCountTests {
    @Test(.enabled(if: JSONNormalizer.fastKernel != 0, "no JSON kernel runs on this CPU"))
    func theFastPathsCountIsNumberSafetys() throws {
        var rng = SystemRandomNumberGenerator()
        var texts: [String] = ["90089012000000000000", "12345678900617283945", "9007199254740993", "-65.613616999999977",
                               "0.30000000000000004", "505874924095815700", "123456789012345678901234"]
        for n in 0..<20_000 {
            let m = UInt64.random(in: 1_000_000_000_000_000..<100_000_000_000_000_000, using: &rng)
            let text = String(m)
            let cut = Int.random(in: 0...text.count, using: &rng)
            texts.append(n % 3 == 0 ? "\(m)e\(Int.random(in: -18...3, using: &rng))"
                         : cut == text.count ? text : String(text.prefix(max(1, cut))) + "." + text.dropFirst(max(1, cut)))
        }
        let json = Array(("[" + texts.joined(separator: ",") + "]").utf8)
        let (bytes, known, _) = try #require(JSONNormalizer.fastNormalizeCounting(json, from: 0, options: .init()))
        // Undecided exactly where NumberSafety's own exact check is (ties), else the same count.
        var undecided = 0
        NumberGuard.forEachNumber(bytes) { range, p in
            let lexeme = UnsafeBufferPointer(rebasing: p[range])
            if !NumberSafety.isSafeByShape(lexeme) && NumberSafety.exactCheck(lexeme) == .undecided { undecided += 1 }
            return true
        }
        #expect((known == nil) == (undecided > 0), "\(undecided) undecided")
        if let known { #expect(known == NumberGuard.count(bytes)) }
        #expect(NumberGuard.count(bytes) > 1000)
        // Without the ties: counted in C, the same as NumberSafety.
        let decided = Array(("[" + texts.filter { text in
            text.utf8.withContiguousStorageIfAvailable { NumberSafety.isSafeByShape($0) || NumberSafety.exactCheck($0) != .undecided }!
        }.joined(separator: ",") + "]").utf8)
        let (decidedBytes, decidedKnown, _) = try #require(JSONNormalizer.fastNormalizeCounting(decided, from: 0, options: .init()))
        #expect(decidedKnown == NumberGuard.count(decidedBytes))
    }
}

/// The property-list readers count unsafe numbers as they write them: the same count a
/// scan of their output gives.
@Suite struct PlistNumberCountTests {
    @Test func bothReadersCountWhatTheScanFinds() throws {
        let numbers = ["9007199254740993", "9007199254740992", "-9223372036854775808", "12345678901234567", "7", "1.10",
                       "0.30000000000000004440892098500626", "1e400", "123456789012345678"]
        let xml = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><array>"
            + numbers.map { $0.contains(".") || $0.contains("e") ? "<real>\($0)</real>" : "<integer>\($0)</integer>" }.joined()
            + "</array></dict></plist>"
        let fromXML = try PlistTranscoder.transcode(Array(xml.utf8))
        #expect(fromXML.knownUnsafeNumbers == NumberGuard.count(fromXML.bytes))
        #expect(fromXML.knownUnsafeNumbers == 6)
        // bplist00: [9007199254740993 (8 bytes), 7 (1 byte), 2^63 + 1 (16 bytes), 1.5 (real)]
        var binary = Array("bplist00".utf8) + [0xA4, 1, 2, 3, 4]
        binary += [0x13, 0x00, 0x20, 0, 0, 0, 0, 0, 0x01]                                   // object 1 at 13
        binary += [0x10, 7]                                                                  // object 2 at 22
        binary += [0x14] + [UInt8](repeating: 0, count: 8) + [0x80, 0, 0, 0, 0, 0, 0, 0x01]  // object 3 at 24
        binary += [0x23, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]                                       // object 4 at 41
        let table = binary.count
        binary += [8, 13, 22, 24, 41]
        binary += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 5] + [UInt8](repeating: 0, count: 8)
            + [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        let fromBinary = try PlistTranscoder.transcode(binary)
        #expect(fromBinary.text == "[9007199254740993,7,9223372036854775809,1.5]")
        #expect(fromBinary.knownUnsafeNumbers == 2 && NumberGuard.count(fromBinary.bytes) == 2)
    }
}
