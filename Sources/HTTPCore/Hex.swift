/// Hexadecimal digits, the one place serializerd reads and writes them (percent-escapes,
/// `\u` escapes, request ids).
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
}
