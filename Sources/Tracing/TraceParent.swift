/// W3C Trace Context's `traceparent` (https://www.w3.org/TR/trace-context/): the trace a
/// request belongs to, the span that sent it, and whether that trace is sampled.
public struct TraceParent: Equatable, Sendable {
    /// The 16-byte trace id as two words, most significant first; never both zero.
    public var traceHigh: UInt64
    public var traceLow: UInt64
    /// The 8-byte span id of the sender; never zero.
    public var spanID: UInt64
    /// The trace-flags byte; bit 0 is `sampled`.
    public var flags: UInt8

    public init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, flags: UInt8) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.flags = flags
    }

    public var sampled: Bool { flags & 1 != 0 }

    /// The field's length in version 00; a later version may append `-` and more.
    static let length = 55

    /// Parses a field value, or nil when it does not follow the specification: lowercase
    /// hex only, version `ff` invalid, all-zero ids invalid, version `00` exactly 55 bytes,
    /// a later version at least 55 with `-` after them (its first four parts read as 00's).
    public init?(_ value: UnsafeBufferPointer<UInt8>) {
        guard value.count >= Self.length,
              let version = Self.hex(value, 0, 2), version != 0xFF,
              value[2] == UInt8(ascii: "-"), value[35] == UInt8(ascii: "-"), value[52] == UInt8(ascii: "-"),
              let high = Self.hex(value, 3, 16), let low = Self.hex(value, 19, 16), let span = Self.hex(value, 36, 16),
              let flags = Self.hex(value, 53, 2) else { return nil }
        if version == 0 {
            guard value.count == Self.length else { return nil }
        } else if value.count > Self.length, value[Self.length] != UInt8(ascii: "-") {
            return nil
        }
        guard high | low != 0, span != 0 else { return nil }
        self.init(traceHigh: high, traceLow: low, spanID: span, flags: UInt8(flags))
    }

    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ TraceParent($0) }) else { return nil }
        self = parsed
    }

    /// `count` lowercase hex digits at `start`, or nil.
    private static func hex(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> UInt64? {
        var value: UInt64 = 0
        for i in start..<(start + count) {
            let c = bytes[i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// The version-00 field value: `00-<trace id>-<span id>-<flags>`.
    public var field: String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.length)
        bytes.append(contentsOf: "00-".utf8)
        HexID.append(traceHigh, to: &bytes)
        HexID.append(traceLow, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        HexID.append(spanID, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        HexID.append(UInt64(flags), digits: 2, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Ids as lowercase hex, the way Trace Context and OTLP/JSON write them.
public enum HexID {
    static let digits = Array("0123456789abcdef".utf8)

    /// `digits` hex digits of `value`, most significant first.
    public static func append(_ value: UInt64, digits count: Int = 16, to out: inout [UInt8]) {
        var shift = (count - 1) * 4
        while shift >= 0 {
            out.append(digits[Int((value >> UInt64(shift)) & 0xF)])
            shift -= 4
        }
    }
}
