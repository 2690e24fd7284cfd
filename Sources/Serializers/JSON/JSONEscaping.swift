internal import CVector
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

    /// Whether any byte of `x` needs an escape: exact for "any" (the borrows of the
    /// subtractions only ever add lanes above one that already qualifies).
    @inline(__always)
    static func anyNeedsEscape<Word: FixedWidthInteger & UnsignedInteger>(_ x: Word) -> Bool {
        let ones = Word.max / 0xFF, highs = ones &* 0x80
        let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
        let found = ((x &- ones &* 0x20) & ~x) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
        return found & highs != 0
    }

    @inline(__always)
    static func load<Word: FixedWidthInteger>(_ p: UnsafePointer<UInt8>, _ k: Int, as: Word.Type) -> Word {
        UnsafeRawPointer(p + k).loadUnaligned(as: Word.self)
    }

    /// The index of the first byte at or after `k` that needs an escape, or `n`. Text
    /// rarely holds one: eight bytes are checked at a time (a short tail by overlapping
    /// the last word or two 4-byte halves), and only a word holding one is read bytewise.
    @inline(__always)
    static func firstEscape(_ p: UnsafePointer<UInt8>, from start: Int, count n: Int) -> Int {
        var k = start
        // Sixteen bytes a step while they last (VectorScan's compares; controls found as
        // unsigned < 0x20 by flipping the high bit, so non-ASCII text passes).
        while k + 16 <= n {
            let v = UnsafeRawPointer(p + k).loadUnaligned(as: SIMD16<Int8>.self)
            let flipped = v ^ SIMD16(repeating: -128)
            let m = serializerd_movemask(serializerd_eq(v, SIMD16(repeating: 0x22)) | serializerd_eq(v, SIMD16(repeating: 0x5C))
                | serializerd_lt(flipped, SIMD16(repeating: Int8(bitPattern: 0xA0))))
            if m != 0 { return k + m.trailingZeroBitCount }
            k += 16
        }
        while k + 8 <= n && !anyNeedsEscape(load(p, k, as: UInt64.self)) { k += 8 }
        if k + 8 > n {
            if n - start >= 8 {
                if !anyNeedsEscape(load(p, n - 8, as: UInt64.self)) { return n }
            } else if n - k >= 4 {
                if !anyNeedsEscape(load(p, k, as: UInt32.self)) && !anyNeedsEscape(load(p, n - 4, as: UInt32.self)) { return n }
            }
        }
        while k < n && !needsEscape(p[k]) { k += 1 }
        return k
    }

    /// Length of `"…"` for these bytes once escaped.
    static func quotedLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var length = bytes.count + 2
        guard let p = bytes.baseAddress else { return length }
        var k = firstEscape(p, from: 0, count: bytes.count)
        while k < bytes.count {
            switch p[k] {
            case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: length += 1
            default: length += 5
            }
            k = firstEscape(p, from: k + 1, count: bytes.count)
        }
        return length
    }

    /// Writes `"…"` at `out`, which has room for `quotedLength(bytes)` (at most 6 bytes
    /// per byte, plus 2); returns that length. Runs without escapes are copied whole.
    @discardableResult
    public static func writeQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\"")
        var w = 1
        if let p = bytes.baseAddress {
            var k = 0
            while k < bytes.count {
                let e = firstEscape(p, from: k, count: bytes.count)
                copyBytes(p + k, e - k, to: out + w)
                w += e - k
                guard e < bytes.count else { break }
                writeScalar(UInt32(p[e]), into: out, at: &w)
                k = e + 1
            }
        }
        out[w] = UInt8(ascii: "\"")
        return w + 1
    }

    /// Room `writeQuotedWide` needs for `count` bytes: six per byte (`\u001f`), the
    /// quotes, and the sixteen its last block may store past the end.
    public static func wideRoom(_ count: Int) -> Int { 6 * count + 18 }

    /// `writeQuoted` for text dense with escapes (a JSON document inside a JSON string has
    /// a quote every few bytes): a block of sixteen is searched once, and each escape in it
    /// costs a 16-byte copy of the run before it plus the escape, not a new search. Short
    /// tails go as `writeQuoted` does. `out` has room for `wideRoom(bytes.count)`.
    @discardableResult
    public static func writeQuotedWide(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\"")
        var w = 1
        guard let p = bytes.baseAddress else { out[1] = UInt8(ascii: "\""); return 2 }
        let n = bytes.count
        var k = 0
        @inline(__always) func copy16(from source: Int, to target: Int) {
            UnsafeMutableRawPointer(out + target).storeBytes(of: UnsafeRawPointer(p + source).loadUnaligned(as: SIMD16<Int8>.self),
                                                            as: SIMD16<Int8>.self)
        }
        // Whole blocks while a 16-byte read from anywhere in the block stays in the input.
        // (Wrapping arithmetic: every index is bounded by the room, and the checks cost a
        // third of the loop.)
        while k &+ 32 <= n {
            let v = UnsafeRawPointer(p + k).loadUnaligned(as: SIMD16<Int8>.self)
            let flipped = v ^ SIMD16(repeating: -128)
            var m = serializerd_movemask(serializerd_eq(v, SIMD16(repeating: 0x22)) | serializerd_eq(v, SIMD16(repeating: 0x5C))
                | serializerd_lt(flipped, SIMD16(repeating: Int8(bitPattern: 0xA0))))
            var s = 0
            while m != 0 {
                let t = Int(m.trailingZeroBitCount)
                copy16(from: k &+ s, to: w)
                w = w &+ (t &- s)
                let c = p[k &+ t]
                if c == 0x22 || c == 0x5C {
                    // Quotes and backslashes, nearly every escape in JSON text: no switch.
                    out[w] = UInt8(ascii: "\\"); out[w &+ 1] = c; w = w &+ 2
                } else {
                    writeScalar(UInt32(c), into: out, at: &w)
                }
                s = t &+ 1
                m &= m &- 1
            }
            copy16(from: k &+ s, to: w)
            w = w &+ (16 &- s)
            k = k &+ 16
        }
        while k < n {
            let e = firstEscape(p, from: k, count: n)
            copyBytes(p + k, e - k, to: out + w)
            w += e - k
            guard e < n else { break }
            writeScalar(UInt32(p[e]), into: out, at: &w)
            k = e + 1
        }
        out[w] = UInt8(ascii: "\"")
        return w + 1
    }

    /// Appends `"…"` for already-valid UTF-8 bytes.
    public static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let length = quotedLength(bytes)
        if length == bytes.count + 2 {
            // Nothing to escape, the usual case: copied as it is.
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return
        }
        let start = out.count
        out.appendZeros(length)
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
