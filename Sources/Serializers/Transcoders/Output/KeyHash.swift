/// A seeded hash for short byte strings (form keys): wyhash's construction — 64×64→128-bit
/// multiplies folded by xor — keyed with a per-process random secret, so hash flooding
/// needs the secret. A few nanoseconds for a key under 16 bytes, where Swift's
/// SipHash-based `Hasher` took ~25 ns, a tenth of the per-field budget of DESIGN §5.
enum KeyHash {
    /// Drawn once per process from the system's random source.
    static let secret: (UInt64, UInt64, UInt64) = {
        var rng = SystemRandomNumberGenerator()
        return (rng.next() | 1, rng.next() | 1, rng.next() | 1)
    }()

    @inline(__always)
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    static func read8(_ p: UnsafeRawPointer, _ at: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }

    @inline(__always)
    static func read4(_ p: UnsafeRawPointer, _ at: Int) -> UInt64 { UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }

    /// The hash of `bytes` within the namespace `scope` (a form key's parent node).
    /// Reads only inside `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer, scope: UInt64) -> UInt64 {
        let (s0, s1, s2) = secret
        let n = bytes.count
        var seed = mix(scope ^ s0, s1)
        var a: UInt64 = 0, b: UInt64 = 0
        if let p = bytes.baseAddress {
            if n <= 16 {
                if n >= 4 {
                    // Two overlapping 4-byte reads from each end cover 4-16 bytes.
                    let middle = (n >> 3) << 2
                    a = read4(p, 0) << 32 | read4(p, middle)
                    b = read4(p, n - 4) << 32 | read4(p, n - 4 - middle)
                } else if n > 0 {
                    let bytes = p.assumingMemoryBound(to: UInt8.self)
                    a = UInt64(bytes[0]) << 16 | UInt64(bytes[n >> 1]) << 8 | UInt64(bytes[n - 1])
                }
            } else {
                var at = 0
                while n - at > 16 {
                    seed = mix(read8(p, at) ^ s1, read8(p, at + 8) ^ seed)
                    at += 16
                }
                a = read8(p, n - 16)
                b = read8(p, n - 8)
            }
        }
        let product = (a ^ s1).multipliedFullWidth(by: b ^ seed)
        return mix(product.low ^ s2 ^ UInt64(n), product.high ^ s1)
    }
}
