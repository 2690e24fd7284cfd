internal import CVector

/// The normalizer's inner loops: the runs of bytes it passes over without deciding
/// anything (whitespace, plain string bytes, digits). `VectorScan` classifies 16 bytes
/// per step; `ByteScan` is the portable byte-at-a-time form, kept as the reference the
/// vector form is tested against (`NormalizerCore.run(_:)` is generic over the two).
///
/// Every function reads only below `n`. The string copy may store up to 16 bytes past
/// what it copies: the caller guarantees the output has room, because the output never
/// outruns the input (`w ≤ i - start`, and the output holds `n - start` bytes).
protocol JSONByteScan {
    /// Moves `i` to the first byte at or after it that is not JSON whitespace (or to `n`).
    static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int)
    /// Copies string bytes from `p + i` to `o + w` up to the first quote, backslash,
    /// control or non-ASCII byte (or `n`), advancing both cursors.
    static func copyPlain(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int, _ o: UnsafeMutablePointer<UInt8>, _ w: inout Int)
    /// Moves `i` past ASCII digits.
    static func skipDigits(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int)
    /// The digits near a number's start, classified once for all of its digit runs.
    static func digitRuns(_ p: UnsafePointer<UInt8>, _ n: Int, at begin: Int) -> DigitRuns
}

/// Which of the `span` bytes from `begin` are digits (bit k for byte `begin + k`), so a
/// number's integer, fraction and exponent runs are found by shifts of one mask instead
/// of a classification each, whose loads wait on the run before. Past `span` (0 for the
/// bytewise scan), runs are found by `skipDigits`.
struct DigitRuns {
    let begin: Int
    let span: Int
    let mask: UInt64

    @inline(__always)
    func skip<S: JSONByteScan>(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int, _: S.Type) {
        let offset = i &- begin
        if offset < span {
            // Bits at and above `span` are clear in the mask, so the run stops there.
            i += (~mask >> UInt64(offset)).trailingZeroBitCount
            if i - begin < span { return }
        }
        S.skipDigits(p, n, &i)
    }
}

enum ByteScan: JSONByteScan {
    @inline(__always) static func isWhitespace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09
    }

    @inline(__always)
    static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) {
        while i < n && isWhitespace(p[i]) { i += 1 }
    }

    @inline(__always)
    static func copyPlain(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int, _ o: UnsafeMutablePointer<UInt8>, _ w: inout Int) {
        while i < n {
            let c = p[i]
            if c < 0x20 || c == 0x22 || c == 0x5C || c >= 0x80 { return }
            o[w] = c
            w += 1
            i += 1
        }
    }

    @inline(__always)
    static func skipDigits(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) {
        while i < n && p[i] &- 0x30 < 10 { i += 1 }
    }

    @inline(__always)
    static func digitRuns(_ p: UnsafePointer<UInt8>, _ n: Int, at begin: Int) -> DigitRuns {
        DigitRuns(begin: begin, span: 0, mask: 0)
    }
}

enum VectorScan: JSONByteScan {
    typealias Lanes = SIMD16<Int8>

    @inline(__always) static func load(_ p: UnsafePointer<UInt8>) -> Lanes {
        UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
    }

    @inline(__always) static func lanes(_ c: UInt8) -> Lanes { Lanes(repeating: Int8(bitPattern: c)) }

    @inline(__always)
    static func skipWhitespace(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) {
        // Whitespace bytes are all ≤ 0x20; most tokens follow their separator directly,
        // and most of the rest one space after it (`"key": value`).
        guard i < n, p[i] <= 0x20 else { return }
        if i + 1 < n, p[i + 1] > 0x20, p[i] == 0x20 {
            i += 1
            return
        }
        while i + 16 <= n {
            let v = load(p + i)
            let ws = serializerd_eq(v, lanes(0x20)) | serializerd_eq(v, lanes(0x0A))
                | serializerd_eq(v, lanes(0x0D)) | serializerd_eq(v, lanes(0x09))
            let other = ~serializerd_movemask(ws) & 0xFFFF
            if other != 0 {
                i += other.trailingZeroBitCount
                return
            }
            i += 16
        }
        ByteScan.skipWhitespace(p, n, &i)
    }

    @inline(__always)
    static func copyPlain(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int, _ o: UnsafeMutablePointer<UInt8>, _ w: inout Int) {
        while i + 16 <= n {
            let v = load(p + i)
            UnsafeMutableRawPointer(o + w).storeBytes(of: v, as: Lanes.self)
            // Signed, bytes ≥ 0x80 are negative: one compare finds controls and non-ASCII.
            let stop = serializerd_eq(v, lanes(0x22)) | serializerd_eq(v, lanes(0x5C)) | serializerd_lt(v, lanes(0x20))
            let m = serializerd_movemask(stop)
            if m != 0 {
                let k = m.trailingZeroBitCount
                i += k
                w += k
                return
            }
            i += 16
            w += 16
        }
        ByteScan.copyPlain(p, n, &i, o, &w)
    }

    /// Bit k set when byte k of the 16 at `p` is a digit.
    @inline(__always) static func digits(_ p: UnsafePointer<UInt8>) -> UInt32 {
        // An unsigned range check with a signed compare: c - 0xB0 maps '0'…'9' to
        // -128…-119 and every other byte above them.
        let d = load(p) &- lanes(0x30 &+ 0x80)
        return serializerd_movemask(serializerd_lt(d, lanes(0x80 &+ 10)))
    }

    @inline(__always)
    static func digitRuns(_ p: UnsafePointer<UInt8>, _ n: Int, at begin: Int) -> DigitRuns {
        guard begin + 32 <= n else { return DigitRuns(begin: begin, span: 0, mask: 0) }
        return DigitRuns(begin: begin, span: 32, mask: UInt64(digits(p + begin) | digits(p + begin + 16) << 16))
    }

    @inline(__always)
    static func skipDigits(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) {
        while i + 16 <= n {
            let other = ~digits(p + i) & 0xFFFF
            if other != 0 {
                i += other.trailingZeroBitCount
                return
            }
            i += 16
        }
        ByteScan.skipDigits(p, n, &i)
    }
}
