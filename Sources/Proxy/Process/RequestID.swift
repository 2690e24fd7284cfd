import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Request ids: 16 hex digits from a per-worker SplitMix64 stream, seeded once from
/// the system generator (which costs a getrandom syscall per call). Ids need to be
/// unique, not secret.
struct RequestID {
    private var state: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    mutating func make() -> String {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        let value = z ^ (z >> 31)
        // 16 bytes fit a small String: written in place, no allocation.
        return String(unsafeUninitializedCapacity: 16) { buffer in
            for k in 0..<16 { buffer[k] = Hex.digit(UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * k))) }
            return 16
        }
    }

    /// A client's id is kept when it is short printable ASCII.
    static func accept(_ candidate: String?) -> String? {
        guard let candidate, !candidate.isEmpty, candidate.utf8.count <= 200,
              candidate.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return candidate
    }
}
