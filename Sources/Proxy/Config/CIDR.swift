#if canImport(Glibc)
import Glibc
#endif

/// `127.0.0.0/8`, `::1/128`, or a bare address (a /32 or /128).
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let maxLength = address.bytes.count * 8
        let length = parts.count == 2 ? Int(parts[1]) : maxLength
        guard let length, (0...maxLength).contains(length) else { return nil }
        network = address
        prefixLength = length
        description = text
    }

    public func contains(_ address: IPAddress) -> Bool {
        let candidate = address.unmapped
        guard candidate.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (a, b) in zip(candidate.bytes, network.bytes) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if a & mask != b & mask { return false }
            remaining -= bits
        }
        return true
    }
}
