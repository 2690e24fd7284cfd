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
