/// Reads an image's format and pixel size from its container structure, without
/// decoding pixels. Besides the header it checks that the container is whole
/// (PNG reaches IEND, JPEG has SOF, SOS and EOI, GIF ends in its trailer, BMP/ICO/
/// TIFF/WebP data lies inside the body), so a truncated download fails instead of
/// passing as an image.
public enum ImageInspector {
    public struct Info: Equatable, Sendable {
        public let format: String
        public let width: Int
        public let height: Int
    }

    public static func inspect(_ b: [UInt8]) throws(TranscodeError) -> Info {
        let reader = ByteReader(b)
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return try png(reader) }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return try jpeg(reader) }
        if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) { return try gif(reader) }
        if b.starts(with: Array("BM".utf8)) { return try bmp(reader) }
        if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return try tiff(reader) }
        if b.starts(with: [0, 0, 1, 0]) { return try ico(reader) }
        if b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) {
            return try webp(reader)
        }
        throw TranscodeError("not a PNG, JPEG, GIF, BMP, TIFF, ICO or WebP image (unknown signature)")
    }

    static func truncated(_ format: String) -> TranscodeError {
        TranscodeError("truncated or corrupt \(format) image")
    }

    static func png(_ r: ByteReader) throws(TranscodeError) -> Info {
        guard r.count >= 33, r.ascii(12, 4) == "IHDR" else { throw truncated("PNG") }
        let width = r.be32(16), height = r.be32(20)
        var at = 8
        while true {
            guard at + 12 <= r.count else { throw truncated("PNG") }
            let length = r.be32(at)
            let type = r.ascii(at + 4, 4)
            at += 12 + length
            guard length >= 0, at <= r.count else { throw truncated("PNG") }
            if type == "IEND" { break }
        }
        return try sized("png", width, height)
    }

    static func jpeg(_ r: ByteReader) throws(TranscodeError) -> Info {
        var at = 2
        var size: (Int, Int)?
        while at + 4 <= r.count {
            guard r[at] == 0xFF else { throw truncated("JPEG") }
            let marker = r[at + 1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            let length = r.be16(at + 2)
            guard length >= 2, at + 2 + length <= r.count else { throw truncated("JPEG") }
            let isSOF = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isSOF {
                guard length >= 7 else { throw truncated("JPEG") }
                size = (r.be16(at + 7), r.be16(at + 5))
            }
            if marker == 0xDA {
                guard let size, r.count >= 2, r[r.count - 2] == 0xFF, r[r.count - 1] == 0xD9 else {
                    throw truncated("JPEG")
                }
                return try sized("jpeg", size.0, size.1)
            }
            at += 2 + length
        }
        throw truncated("JPEG")
    }

    static func gif(_ r: ByteReader) throws(TranscodeError) -> Info {
        guard r.count >= 14, r[r.count - 1] == 0x3B else { throw truncated("GIF") }
        return try sized("gif", r.le16(6), r.le16(8))
    }

    static func bmp(_ r: ByteReader) throws(TranscodeError) -> Info {
        guard r.count >= 26 else { throw truncated("BMP") }
        let dataOffset = r.le32(10), headerSize = r.le32(14)
        let width: Int, height: Int
        if headerSize == 12 {
            width = r.le16(18); height = r.le16(20)
        } else {
            guard headerSize >= 40, r.count >= 14 + 40 else { throw truncated("BMP") }
            width = Int(Int32(truncatingIfNeeded: r.le32(18)))
            height = abs(Int(Int32(truncatingIfNeeded: r.le32(22))))
        }
        guard dataOffset >= 14 + headerSize, dataOffset < r.count else { throw truncated("BMP") }
        let bitsPerPixel = headerSize == 12 ? r.le16(24) : r.le16(28)
        let compression = headerSize == 12 ? 0 : r.le32(30)
        let declaredSize = headerSize == 12 ? 0 : r.le32(34)
        guard width > 0 else { throw truncated("BMP") }
        // The header's numbers are the input's: a pixel-array size past Int is simply more
        // than the body holds, never an overflow trap.
        let rowBytes = (bitsPerPixel * width + 31) / 32 * 4
        let (pixels, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        let required = [0, 3, 6].contains(compression) ? pixels : declaredSize
        guard !overflow || ![0, 3, 6].contains(compression), required <= r.count - dataOffset else { throw truncated("BMP") }
        return try sized("bmp", width, height)
    }

    static func tiff(_ r: ByteReader) throws(TranscodeError) -> Info {
        let little = r[0] == 0x49
        func u16(_ at: Int) -> Int { little ? r.le16(at) : r.be16(at) }
        func u32(_ at: Int) -> Int { little ? r.le32(at) : r.be32(at) }
        guard r.count >= 8 else { throw truncated("TIFF") }
        let ifd = u32(4)
        guard ifd >= 8, ifd + 2 <= r.count else { throw truncated("TIFF") }
        let entries = u16(ifd)
        guard ifd + 2 + entries * 12 <= r.count else { throw truncated("TIFF") }
        var width = 0, height = 0
        var fields: [Int: [Int]] = [:]
        for k in 0..<entries {
            let e = ifd + 2 + k * 12
            let tag = u16(e), type = u16(e + 2), count = u32(e + 4)
            guard type == 3 || type == 4 else { continue }
            let size = type == 3 ? 2 : 4
            let base = count * size <= 4 ? e + 8 : u32(e + 8)
            guard count >= 1, count < 1 << 20, base + count * size <= r.count else { throw truncated("TIFF") }
            fields[tag] = (0..<count).map { type == 3 ? u16(base + $0 * 2) : u32(base + $0 * 4) }
        }
        width = fields[256]?.first ?? 0
        height = fields[257]?.first ?? 0
        // Pixel data (strips or tiles) must lie inside the body.
        let offsets = fields[273] ?? fields[324] ?? [], counts = fields[279] ?? fields[325] ?? []
        guard !offsets.isEmpty, offsets.count == counts.count,
              zip(offsets, counts).allSatisfy({ $0 + $1 <= r.count }) else { throw truncated("TIFF") }
        return try sized("tiff", width, height)
    }

    static func ico(_ r: ByteReader) throws(TranscodeError) -> Info {
        guard r.count >= 22, r.le16(4) >= 1 else { throw truncated("ICO") }
        let size = r.le32(14), offset = r.le32(18)
        guard size > 0, offset >= 22, offset + size <= r.count else { throw truncated("ICO") }
        let width = r[6] == 0 ? 256 : Int(r[6]), height = r[7] == 0 ? 256 : Int(r[7])
        return try sized("ico", width, height)
    }

    static func webp(_ r: ByteReader) throws(TranscodeError) -> Info {
        guard r.count >= 30, r.le32(4) + 8 <= r.count else { throw truncated("WebP") }
        switch r.ascii(12, 4) {
        case "VP8 ":
            guard r[23] == 0x9D, r[24] == 0x01, r[25] == 0x2A else { throw truncated("WebP") }
            return try sized("webp", r.le16(26) & 0x3FFF, r.le16(28) & 0x3FFF)
        case "VP8L":
            guard r[20] == 0x2F else { throw truncated("WebP") }
            let bits = r.le32(21)
            return try sized("webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            let width = (Int(r[24]) | Int(r[25]) << 8 | Int(r[26]) << 16) + 1
            let height = (Int(r[27]) | Int(r[28]) << 8 | Int(r[29]) << 16) + 1
            return try sized("webp", width, height)
        default:
            throw truncated("WebP")
        }
    }

    static func sized(_ format: String, _ width: Int, _ height: Int) throws(TranscodeError) -> Info {
        guard width > 0, height > 0 else { throw TranscodeError("\(format) image declares a zero size") }
        return Info(format: format, width: width, height: height)
    }
}

/// Bounds-checked integer reads; out-of-range reads yield 0 and callers check sizes first.
struct ByteReader {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var count: Int { bytes.count }
    subscript(_ i: Int) -> UInt8 { i >= 0 && i < bytes.count ? bytes[i] : 0 }
    func be16(_ i: Int) -> Int { Int(self[i]) << 8 | Int(self[i + 1]) }
    func le16(_ i: Int) -> Int { Int(self[i + 1]) << 8 | Int(self[i]) }
    func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }
    func le32(_ i: Int) -> Int { le16(i + 2) << 16 | le16(i) }
    func ascii(_ i: Int, _ n: Int) -> String {
        String(decoding: (i..<i + n).map { self[$0] }, as: UTF8.self)
    }
}
