internal import CVector
/// Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF.
enum UTF8Validation {
    /// Length of the valid sequence starting at `i`, or nil when it is invalid or cut off.
    @inline(__always)
    static func sequenceLength(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        let b0 = p[i]
        if b0 < 0x80 { return 1 }
        if b0 < 0xC2 { return nil }
        if b0 < 0xE0 {
            guard i + 1 < n, p[i + 1] & 0xC0 == 0x80 else { return nil }
            return 2
        }
        if b0 < 0xF0 {
            guard i + 2 < n else { return nil }
            let b1 = p[i + 1], b2 = p[i + 2]
            guard b1 & 0xC0 == 0x80, b2 & 0xC0 == 0x80 else { return nil }
            if b0 == 0xE0 && b1 < 0xA0 { return nil }          // overlong
            if b0 == 0xED && b1 >= 0xA0 { return nil }         // UTF-16 surrogate
            return 3
        }
        if b0 < 0xF5 {
            guard i + 3 < n else { return nil }
            let b1 = p[i + 1], b2 = p[i + 2], b3 = p[i + 3]
            guard b1 & 0xC0 == 0x80, b2 & 0xC0 == 0x80, b3 & 0xC0 == 0x80 else { return nil }
            if b0 == 0xF0 && b1 < 0x90 { return nil }          // overlong
            if b0 == 0xF4 && b1 >= 0x90 { return nil }         // above U+10FFFF
            return 4
        }
        return nil
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = bytes.baseAddress else { return true }
        var i = 0, high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
            i += 8
        }
        while i < bytes.count { high |= UInt64(p[i]); i += 1 }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// `sequenceLength` on the four bytes from a non-ASCII lead byte, loaded as one
    /// little-endian word (lead byte lowest): masks instead of a load and test per byte.
    @inline(__always)
    static func sequenceLength(word x: UInt32) -> Int? {
        let b0 = x & 0xFF, b1 = x >> 8 & 0xFF
        if x & 0x00C0_C0F0 == 0x0080_80E0 {
            if b0 == 0xE0 && b1 < 0xA0 || b0 == 0xED && b1 >= 0xA0 { return nil }   // overlong, surrogate
            return 3
        }
        if x & 0xC0E0 == 0x80C0 { return b0 >= 0xC2 ? 2 : nil }                    // C0, C1: overlong
        if x & 0xC0C0_C0F8 == 0x8080_80F0 {
            if b0 == 0xF0 && b1 < 0x90 || b0 == 0xF4 && b1 >= 0x90 || b0 > 0xF4 { return nil }
            return 4
        }
        return nil
    }

    /// Offset of the first invalid byte, or nil when all of `bytes` is valid UTF-8.
    static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let p = bytes.baseAddress else { return nil }
        let n = bytes.count
        var i = 0
        while i < n {
            // ASCII runs sixteen bytes a step (a lead byte's high bit is the mask bit).
            while i &+ 16 <= n && serializerd_movemask(UnsafeRawPointer(p + i).loadUnaligned(as: SIMD16<Int8>.self)) == 0 { i = i &+ 16 }
            guard i < n else { break }
            if i + 8 <= n {
                let word = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 { i += 8; continue }
            }
            guard let len = sequenceLength(p, i, n) else { return i }
            i += len
        }
        return nil
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { firstInvalidOffset($0) == nil }
    }

    /// The longest prefix of at most `limit` bytes that ends on a character boundary.
    static func prefix(_ bytes: [UInt8], maxBytes limit: Int) -> [UInt8] {
        guard bytes.count > limit else { return bytes }
        var end = limit
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }

    /// Appends the UTF-8 encoding of a scalar value (assumed valid).
    @inline(__always)
    static func encode(_ cp: UInt32, into out: UnsafeMutablePointer<UInt8>, at w: inout Int) {
        if cp < 0x80 {
            out[w] = UInt8(cp); w += 1
        } else if cp < 0x800 {
            out[w] = UInt8(0xC0 | (cp >> 6)); out[w + 1] = UInt8(0x80 | (cp & 0x3F)); w += 2
        } else if cp < 0x10000 {
            out[w] = UInt8(0xE0 | (cp >> 12)); out[w + 1] = UInt8(0x80 | ((cp >> 6) & 0x3F))
            out[w + 2] = UInt8(0x80 | (cp & 0x3F)); w += 3
        } else {
            out[w] = UInt8(0xF0 | (cp >> 18)); out[w + 1] = UInt8(0x80 | ((cp >> 12) & 0x3F))
            out[w + 2] = UInt8(0x80 | ((cp >> 6) & 0x3F)); out[w + 3] = UInt8(0x80 | (cp & 0x3F)); w += 4
        }
    }
}

/// UTF-8 checks for the layers above (problem previews, logs).
public enum UTF8Text {
    public static func isValid(_ bytes: [UInt8]) -> Bool { UTF8Validation.isValid(bytes) }

    /// The text of at most `maxBytes` leading bytes, cut at a character boundary; nil
    /// when the bytes are not UTF-8.
    public static func preview(_ bytes: [UInt8], maxBytes: Int) -> String? {
        guard isValid(bytes) else { return nil }
        return String(decoding: UTF8Validation.prefix(bytes, maxBytes: maxBytes), as: UTF8.self)
    }
}
