import HTTPCore

/// The one escape policy for every JSON string serializerd writes (RFC 8785 §3.2.2.2):
/// `"` and `\` escaped, controls as `\b \t \n \f \r` or `\u00xx` (lowercase hex),
/// everything else as literal UTF-8.
public enum JSONEscaping {
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
            o[w + 4] = Hex.digit(UInt8(cp >> 4)); o[w + 5] = Hex.digit(UInt8(cp & 0xF)); w += 6
        }
    }

    /// Bytes that need an escape: controls, `"` and `\`.
    @inline(__always)
    static func needsEscape(_ c: UInt8) -> Bool { c < 0x20 || c == 0x22 || c == 0x5C }

    /// Length of `"…"` for these bytes once escaped.
    static func quotedLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var length = bytes.count + 2
        for c in bytes where needsEscape(c) {
            switch c {
            case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: length += 1
            default: length += 5
            }
        }
        return length
    }

    /// Writes `"…"` at `out`, which has room for `quotedLength(bytes)`; returns that length.
    @discardableResult
    static func writeQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\"")
        var w = 1
        var runStart = 0
        for k in 0..<bytes.count where needsEscape(bytes[k]) {
            if k > runStart {
                copyBytes(bytes.baseAddress! + runStart, k - runStart, to: out + w)
                w += k - runStart
            }
            writeScalar(UInt32(bytes[k]), into: out, at: &w)
            runStart = k + 1
        }
        if runStart < bytes.count {
            copyBytes(bytes.baseAddress! + runStart, bytes.count - runStart, to: out + w)
            w += bytes.count - runStart
        }
        out[w] = UInt8(ascii: "\"")
        return w + 1
    }

    /// Appends `"…"` for already-valid UTF-8 bytes.
    static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let length = quotedLength(bytes)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: length))
        _ = out.withUnsafeMutableBufferPointer { writeQuoted(bytes, to: $0.baseAddress! + start) }
    }

    /// `"…"` for a string, escaped as every other JSON serializerd writes.
    public static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        var s = string
        s.withUTF8 { appendQuoted($0, to: &out) }
    }

    static func appendQuoted(_ bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { appendQuoted($0, to: &out) }
    }
}
