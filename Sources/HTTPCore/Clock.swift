#if canImport(Glibc)
import Glibc
#endif

/// The two clocks every module reads: monotonic seconds for durations, wall-clock
/// seconds since the Unix epoch for timestamps.
public enum Clock {
    public static func now() -> Double { read(CLOCK_MONOTONIC) }

    public static func wall() -> Double { read(CLOCK_REALTIME) }

    private static func read(_ id: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(id, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Numbers as serializerd writes them in logs, headers, metrics and JSON documents.
public enum NumberText {
    /// Milliseconds with exactly three decimals (`1.234`), by integer arithmetic: Double's
    /// description is a measurable cost where this runs per request.
    public static func milliseconds(_ seconds: Double) -> String {
        String(unsafeUninitializedCapacity: maxMillisecondsLength) { buffer in
            var w = 0
            putMilliseconds(seconds, into: buffer, at: &w)
            return w
        }
    }

    /// The same, appended as bytes (log lines are built as bytes).
    @inline(__always)
    public static func appendMilliseconds(_ seconds: Double, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxMillisecondsLength) { buffer in
            var w = 0
            putMilliseconds(seconds, into: buffer, at: &w)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<w]))
        }
    }

    /// The longest text `putMilliseconds` writes.
    public static let maxMillisecondsLength = 24

    /// Writes milliseconds at `w` into a buffer with `maxMillisecondsLength` bytes free.
    @inline(__always)
    public static func putMilliseconds(_ seconds: Double, into buffer: UnsafeMutableBufferPointer<UInt8>, at w: inout Int) {
        let micros = seconds < 1e12 ? max(0, Int((seconds * 1_000_000).rounded())) : 0
        var whole = micros / 1000, digits = 1
        while whole >= 10 { whole /= 10; digits += 1 }
        whole = micros / 1000
        for k in stride(from: digits - 1, through: 0, by: -1) {
            buffer[w + k] = UInt8(ascii: "0") + UInt8(whole % 10)
            whole /= 10
        }
        w += digits
        let fraction = micros % 1000
        buffer[w] = UInt8(ascii: ".")
        buffer[w + 1] = UInt8(ascii: "0") + UInt8(fraction / 100)
        buffer[w + 2] = UInt8(ascii: "0") + UInt8(fraction / 10 % 10)
        buffer[w + 3] = UInt8(ascii: "0") + UInt8(fraction % 10)
        w += 4
    }

    /// Writes ASCII `text` at `w`; the caller sized the buffer.
    @inline(__always)
    public static func put(_ text: StaticString, into buffer: UnsafeMutableBufferPointer<UInt8>, at w: inout Int) {
        let count = text.utf8CodeUnitCount
        UnsafeMutableRawPointer(buffer.baseAddress! + w).copyMemory(from: text.utf8Start, byteCount: count)
        w += count
    }

    /// The shortest text that reads back as `value` (Go's ParseFloat and JSON parsers
    /// accept it); whole numbers without `.0`.
    public static func shortest(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
