/// Finds the Unicode encoding of JSON bytes the way NSJSONSerialization does (and
/// RFC 4627 §3 describes): a BOM if present, else the pattern of zero bytes in the
/// first four. The Content-Type charset is ignored, as in AF.
enum JSONEncodingDetection {
    enum Encoding: Equatable { case utf8(bomLength: Int), utf16BE, utf16LE, utf32BE, utf32LE }

    static func detect(_ b: UnsafeBufferPointer<UInt8>) -> Encoding {
        let n = b.count
        if n >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { return .utf8(bomLength: 3) }
        if n >= 4, b[0] == 0, b[1] == 0, b[2] == 0xFE, b[3] == 0xFF { return .utf32BE }
        if n >= 4, b[0] == 0xFF, b[1] == 0xFE, b[2] == 0, b[3] == 0 { return .utf32LE }
        if n >= 2, b[0] == 0xFE, b[1] == 0xFF { return .utf16BE }
        if n >= 2, b[0] == 0xFF, b[1] == 0xFE { return .utf16LE }
        if n >= 4, b[0] == 0, b[1] == 0, b[2] == 0, b[3] != 0 { return .utf32BE }
        if n >= 4, b[0] != 0, b[1] == 0, b[2] == 0, b[3] == 0 { return .utf32LE }
        if n >= 2, b[0] == 0, b[1] != 0 { return .utf16BE }
        if n >= 2, b[0] != 0, b[1] == 0 { return .utf16LE }
        return .utf8(bomLength: 0)
    }

    /// Transcodes UTF-16/32 input (BOM dropped) to UTF-8; lone surrogates and
    /// out-of-range scalars fail with the byte offset of the bad unit.
    static func transcodeToUTF8(_ b: UnsafeBufferPointer<UInt8>, _ encoding: Encoding) throws(JSONError) -> [UInt8] {
        let unit: Int, bigEndian: Bool
        switch encoding {
        case .utf8: return Array(b)
        case .utf16BE: unit = 2; bigEndian = true
        case .utf16LE: unit = 2; bigEndian = false
        case .utf32BE: unit = 4; bigEndian = true
        case .utf32LE: unit = 4; bigEndian = false
        }
        func load(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<unit {
                let byte = UInt32(b[bigEndian ? at + k : at + unit - 1 - k])
                v = (v << 8) | byte
            }
            return v
        }
        var i = (load(0) == 0xFEFF) ? unit : 0
        let name = unit == 2 ? "UTF-16" : "UTF-32"
        guard b.count % unit == 0 else {
            throw JSONError("\(name) input has a trailing partial code unit", offset: b.count - b.count % unit)
        }
        var out = [UInt8](repeating: 0, count: b.count * 2)
        var w = 0
        try out.withUnsafeMutableBufferPointer { (o) throws(JSONError) in
            while i < b.count {
                var cp = load(i)
                let at = i
                i += unit
                if unit == 2 && cp >= 0xD800 && cp < 0xDC00 {
                    guard i < b.count else { throw JSONError("lone UTF-16 surrogate", offset: at) }
                    let low = load(i)
                    guard low >= 0xDC00 && low < 0xE000 else { throw JSONError("lone UTF-16 surrogate", offset: at) }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    i += unit
                } else if cp >= 0xD800 && cp < 0xE000 || cp > 0x10FFFF {
                    throw JSONError("invalid \(name) code unit", offset: at)
                }
                UTF8Validation.encode(cp, into: o.baseAddress!, at: &w)
            }
        }
        out.removeSubrange(w...)
        return out
    }
}
