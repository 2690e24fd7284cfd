import HTTPCore
import Serializers
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 UTC timestamps with milliseconds; the date-and-seconds part is cached,
/// since a busy worker logs many lines within the same second.
struct LogClock {
    private var cachedSecond: Int = -1
    private var cachedPrefix: [UInt8] = []

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` as bytes.
    mutating func format(_ unixSeconds: Double) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.length) { buffer, count in
            count = write(unixSeconds, to: buffer.baseAddress!)
        }
    }

    /// The most bytes `write` writes: 24 for years 0–9999, more only for a clock gone
    /// far out of range (a signed nine-digit year).
    static let length = 32

    /// The same, written at `p` (room for `length` bytes); returns how many. The event
    /// JSON writer puts it straight into its buffer.
    mutating func write(_ unixSeconds: Double, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let second = Int(unixSeconds.rounded(.down))
        let millis = min(999, max(0, Int((unixSeconds - Double(second)) * 1000)))
        if second != cachedSecond {
            cachedSecond = second
            let full = UTCTimestamp.format(unixSeconds: Double(second), fraction: .milliseconds)
            cachedPrefix = Array(full.utf8.dropLast(4))   // "…:SS." without "000Z"
        }
        let n = cachedPrefix.count
        cachedPrefix.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: n) }
        p[n] = UInt8(ascii: "0") + UInt8(millis / 100)
        p[n + 1] = UInt8(ascii: "0") + UInt8(millis / 10 % 10)
        p[n + 2] = UInt8(ascii: "0") + UInt8(millis % 10)
        p[n + 3] = UInt8(ascii: "Z")
        return n + 4
    }
}
