/// Hexadecimal digits, the one place serializerd reads and writes them (percent-escapes,
/// `\u` escapes, chunk sizes, entity tags, request ids).
public enum Hex {
    /// The value of one hex digit, either case; nil for anything else.
    @inlinable
    public static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c &- 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c &- 0x57
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c &- 0x37
        default: nil
        }
    }

    /// The lowercase digit for the low four bits of `nibble`.
    @inlinable
    public static func digit(_ nibble: UInt8) -> UInt8 {
        let v = nibble & 0xF
        return v < 10 ? UInt8(ascii: "0") &+ v : UInt8(ascii: "a") &+ v &- 10
    }

    /// The uppercase digit (RFC 3986's preferred case for percent-escapes).
    @inlinable
    public static func upperDigit(_ nibble: UInt8) -> UInt8 {
        let v = nibble & 0xF
        return v < 10 ? UInt8(ascii: "0") &+ v : UInt8(ascii: "A") &+ v &- 10
    }

    /// `value` in lowercase digits, left-padded with zeros to at least `width`.
    public static func string(_ value: UInt64, width: Int = 1) -> String {
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(digit(UInt8(truncatingIfNeeded: rest)))
            rest >>= 4
        } while rest != 0
        while digits.count < width { digits.append(UInt8(ascii: "0")) }
        return String(decoding: digits.reversed(), as: UTF8.self)
    }
}

/// Percent-encoding (RFC 3986 §2.1), the one codec for paths, queries and ids. Forms
/// (`application/x-www-form-urlencoded`) add `+` for space and refuse a bad escape on
/// top of `escapedByte`.
public enum Percent {
    /// The byte a `%XX` at `i` stands for; nil when `bytes[i...]` is not a valid escape.
    @inlinable
    public static func escapedByte<C: RandomAccessCollection<UInt8>>(_ bytes: C, at i: C.Index) -> UInt8? where C.Index == Int {
        guard bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
              let high = Hex.value(bytes[i + 1]), let low = Hex.value(bytes[i + 2]) else { return nil }
        return high << 4 | low
    }

    /// Decodes every valid `%XX` once; anything else (a lone `%`, a bad digit, `+`) is kept.
    public static func decode<C: RandomAccessCollection<UInt8>>(_ bytes: C) -> [UInt8] where C.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if let byte = escapedByte(bytes, at: i) {
                out.append(byte)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// RFC 3986's unreserved characters: ALPHA, DIGIT and `-._~`.
    @inlinable
    public static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Appends `bytes`, each one that `keeps` refuses as `%XX` (uppercase digits).
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>, keeping keeps: (UInt8) -> Bool, into out: inout [UInt8]) {
        for byte in bytes {
            if keeps(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(Hex.upperDigit(byte >> 4))
                out.append(Hex.upperDigit(byte))
            }
        }
    }

    /// `text` with everything but the unreserved characters escaped: one path segment.
    public static func segment(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        encode(text.utf8, keeping: isUnreserved, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
