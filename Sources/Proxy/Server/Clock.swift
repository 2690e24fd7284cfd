#if canImport(Glibc)
import Glibc
#endif

/// Monotonic seconds, for durations.
enum Clock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Request ids: 16 random hex digits.
enum RequestID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// A client's id is kept when it is short printable ASCII.
    static func accept(_ candidate: String?) -> String? {
        guard let candidate, !candidate.isEmpty, candidate.utf8.count <= 200,
              candidate.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return candidate
    }
}
