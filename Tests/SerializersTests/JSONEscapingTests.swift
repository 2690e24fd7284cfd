@testable import Serializers
import Testing

/// The escape policy's word-at-a-time scan agrees with the obvious byte loop, for every
/// length around the 4- and 8-byte steps and every position of the bytes that need one.
@Suite struct JSONEscapingTests {
    /// The policy written out bytewise: the reference.
    func reference(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for c in bytes {
            switch c {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0..<0x20: out += Array(String(format: "\\u%04x", Int(c)).utf8)
            default: out.append(c)
            }
        }
        return out + [0x22]
    }

    func escaped(_ bytes: [UInt8]) -> (written: [UInt8], length: Int, appended: [UInt8]) {
        bytes.withUnsafeBufferPointer { input in
            let length = JSONEscaping.quotedLength(input)
            let out = UnsafeMutablePointer<UInt8>.allocate(capacity: 6 * input.count + 2)
            defer { out.deallocate() }
            let written = JSONEscaping.writeQuoted(input, to: out)
            var buffer = ByteBuffer(capacity: 16)
            buffer.appendQuoted(input)
            return (Array(UnsafeBufferPointer(start: out, count: written)), length,
                    Array(UnsafeBufferPointer(start: buffer.base, count: buffer.count)))
        }
    }

    @Test func everyLengthAndEveryEscapePositionAgree() {
        let special: [UInt8] = [0x22, 0x5C, 0x00, 0x08, 0x0A, 0x1F, 0x7F, 0x20]
        for length in 0...40 {
            for at in 0..<max(length, 1) {
                for c in special {
                    var bytes = [UInt8]((0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) })
                    if length > 0 { bytes[at] = c }
                    let result = escaped(bytes)
                    #expect(result.written == reference(bytes), "\(bytes)")
                    #expect(result.length == result.written.count && result.appended == result.written)
                }
            }
        }
    }

    @Test func randomTextAgreesIncludingLongRuns() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let length = [Int.random(in: 0..<24, using: &generator), Int.random(in: 200..<300, using: &generator)].randomElement(using: &generator)!
            let density = Int.random(in: 1...64, using: &generator)
            let bytes = (0..<length).map { _ -> UInt8 in
                Int.random(in: 0..<density, using: &generator) == 0 ? UInt8.random(in: 0..<0x20, using: &generator)
                    : [0x22, 0x5C, 0x41, 0xC3, 0xA9, 0xE2, 0x80, 0xA8].randomElement(using: &generator)!
            }
            let result = escaped(bytes)
            #expect(result.written == reference(bytes), "\(bytes)")
            #expect(result.length == result.written.count && result.appended == result.written)
        }
    }
}
