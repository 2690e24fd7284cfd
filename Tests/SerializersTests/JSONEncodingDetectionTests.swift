@testable import Serializers
import Testing

@Suite struct JSONEncodingDetectionTests {
    func encode(_ text: String, utf16BigEndian: Bool, bom: Bool) -> [UInt8] {
        var out: [UInt8] = bom ? (utf16BigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
        for unit in text.utf16 {
            let pair = [UInt8(unit >> 8), UInt8(unit & 0xFF)]
            out += utf16BigEndian ? pair : pair.reversed()
        }
        return out
    }

    @Test(arguments: [(true, true), (true, false), (false, true), (false, false)])
    func readsUTF16ByBOMOrPattern(bigEndian: Bool, bom: Bool) throws {
        let bytes = encode("{\"k\":\"é😀\"}", utf16BigEndian: bigEndian, bom: bom)
        #expect(String(decoding: try JSONNormalizer.normalize(bytes), as: UTF8.self) == "{\"k\":\"é😀\"}")
    }

    @Test func readsUTF32LittleEndian() throws {
        var bytes: [UInt8] = []
        for scalar in "[\"é\"]".unicodeScalars {
            let v = scalar.value
            bytes += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
        }
        #expect(String(decoding: try JSONNormalizer.normalize(bytes), as: UTF8.self) == "[\"é\"]")
    }

    @Test func skipsUTF8ByteOrderMark() throws {
        #expect(try JSONNormalizer.normalize([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == Array("[1]".utf8))
    }

    @Test func loneUTF16SurrogateFailsWithOffset() {
        let bytes: [UInt8] = [0x00, 0x22, 0xD8, 0x00, 0x00, 0x22]
        #expect(throws: JSONError.self) { try JSONNormalizer.normalize(bytes) }
        do { _ = try JSONNormalizer.normalize(bytes) } catch { #expect(error.offset == 2) }
    }
}
