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
        var bytes: [UInt8] = []
        appendMilliseconds(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same, appended as bytes (log lines are built as bytes).
    @inline(__always)
    public static func appendMilliseconds(_ seconds: Double, to bytes: inout [UInt8]) {
        let micros = max(0, Int((seconds * 1_000_000).rounded()))
        bytes.append(contentsOf: String(micros / 1000).utf8)
        let fraction = micros % 1000
        bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0") + UInt8(fraction / 100),
                                  UInt8(ascii: "0") + UInt8(fraction / 10 % 10), UInt8(ascii: "0") + UInt8(fraction % 10)])
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
