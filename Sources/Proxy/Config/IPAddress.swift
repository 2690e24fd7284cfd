#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as bytes (network order).
public struct IPAddress: Sendable, Equatable {
    public let bytes: [UInt8]
    public var isV6: Bool { bytes.count == 16 }

    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as IPv4, so one rule covers both.
    public var unmapped: IPAddress {
        guard isV6, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(bytes: Array(bytes[12...]))
    }
}
