#if canImport(Glibc)
import Glibc
#endif

/// `host:port` or `[v6]:port` (port 0 asks the kernel for any free port), or
/// `unix:/absolute/path` for a Unix socket.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// Set for a Unix socket (host and port are then unused).
    public let unixPath: String?

    public init?(_ text: String) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            // sun_path holds 108 bytes with its NUL.
            guard path.hasPrefix("/"), path.utf8.count < 108, !path.utf8.contains(0) else { return nil }
            host = ""
            port = 0
            unixPath = path
            return
        }
        unixPath = nil
        let hostPart: Substring, portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
            guard IPAddress(String(hostPart))?.isV6 == true else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard IPAddress(String(hostPart)) != nil || hostPart == "localhost" else { return nil }
        }
        guard let port = Int(portPart), (0...65535).contains(port) else { return nil }
        self.host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        self.port = port
    }

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
        unixPath = nil
    }

    public var description: String {
        if let unixPath { return "unix:" + unixPath }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

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
