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
        String(unsafeUninitializedCapacity: Self.length) { out in
            write(into: out.baseAddress!)
            return Self.length
        }
    }

    /// The header line `traceparent: <value>` as a C string, written on the stack.
    public func withHeaderLine<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
        let name: StaticString = "traceparent: "
        let n = name.utf8CodeUnitCount
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: n + Self.length + 1) { line in
            let base = UnsafeMutableRawPointer(line.baseAddress!).assumingMemoryBound(to: UInt8.self)
            base.update(from: name.utf8Start, count: n)
            write(into: base + n)
            base[n + Self.length] = 0
            return body(line.baseAddress!)
        }
    }

    /// The version-00 value's 55 bytes at `out`, the ids eight hex digits at a time.
    private func write(into out: UnsafeMutablePointer<UInt8>) {
        let to = UnsafeMutableRawPointer(out)
        func hex(_ value: UInt64, at start: Int) {
            to.storeBytes(of: ByteWriter.hexDigits(UInt32(truncatingIfNeeded: value >> 32)), toByteOffset: start, as: UInt64.self)
            to.storeBytes(of: ByteWriter.hexDigits(UInt32(truncatingIfNeeded: value)), toByteOffset: start + 8, as: UInt64.self)
        }
        let digits: StaticString = "0123456789abcdef"
        out[0] = UInt8(ascii: "0"); out[1] = UInt8(ascii: "0"); out[2] = UInt8(ascii: "-")
        hex(traceHigh, at: 3)
        hex(traceLow, at: 19)
        out[35] = UInt8(ascii: "-")
        hex(spanID, at: 36)
        out[52] = UInt8(ascii: "-")
        out[53] = digits.utf8Start[Int(flags >> 4) & 0xF]
        out[54] = digits.utf8Start[Int(flags) & 0xF]
    }
}
