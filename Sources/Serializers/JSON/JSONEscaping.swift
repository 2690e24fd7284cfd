/// The one escape policy for every JSON string serializerd writes (RFC 8785 §3.2.2.2):
/// `"` and `\` escaped, controls as `\b \t \n \f \r` or `\u00xx` (lowercase hex),
/// everything else as literal UTF-8.
enum JSONEscaping {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    @inline(__always)
    static func writeScalar(_ cp: UInt32, into o: UnsafeMutablePointer<UInt8>, at w: inout Int) {
        if cp >= 0x20 && cp != 0x22 && cp != 0x5C {
            UTF8Validation.encode(cp, into: o, at: &w)
            return
        }
        o[w] = UInt8(ascii: "\\")
        switch cp {
        case 0x22: o[w + 1] = UInt8(ascii: "\""); w += 2
        case 0x5C: o[w + 1] = UInt8(ascii: "\\"); w += 2
        case 0x08: o[w + 1] = UInt8(ascii: "b"); w += 2
        case 0x09: o[w + 1] = UInt8(ascii: "t"); w += 2
        case 0x0A: o[w + 1] = UInt8(ascii: "n"); w += 2
        case 0x0C: o[w + 1] = UInt8(ascii: "f"); w += 2
        case 0x0D: o[w + 1] = UInt8(ascii: "r"); w += 2
        default:
            o[w + 1] = UInt8(ascii: "u"); o[w + 2] = UInt8(ascii: "0"); o[w + 3] = UInt8(ascii: "0")
            o[w + 4] = hex[Int(cp >> 4)]; o[w + 5] = hex[Int(cp & 0xF)]; w += 6
        }
    }

    /// Appends `"…"` for already-valid UTF-8 bytes.
    static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for k in 0..<bytes.count {
            let c = bytes[k]
            guard c < 0x20 || c == 0x22 || c == 0x5C else { continue }
            if k > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<k])) }
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6) { tmp in
                var w = 0
                writeScalar(UInt32(c), into: tmp.baseAddress!, at: &w)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: tmp[0..<w]))
            }
            runStart = k + 1
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }

    static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        var s = string
        s.withUTF8 { appendQuoted($0, to: &out) }
    }

    static func appendQuoted(_ bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { appendQuoted($0, to: &out) }
    }
}
