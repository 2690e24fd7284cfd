import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol (sd_notify(3)): one datagram of `KEY=value` lines to
/// `$NOTIFY_SOCKET`. Written here rather than linking libsystemd: the protocol is stable
/// and documented as the interface, and it is a single sendto.
public final class ServiceNotifier {
    private let fd: Int32
    private var address = sockaddr_un()
    private let addressLength: socklen_t

    /// nil when the process was not started by a service manager that listens.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], path.count > 1 else { return nil }
        var bytes = Array(path.utf8)
        // A leading '@' names a socket in the abstract namespace.
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes[0] == 0 || bytes[0] == UInt8(ascii: "/"), bytes.count < capacity else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        self.fd = fd
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        // Abstract names are not NUL-terminated: the length says where they end.
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes[0] == 0 ? 0 : 1))
    }

    deinit { close(fd) }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…"); false when the manager is gone.
    @discardableResult
    public func send(_ state: String) -> Bool {
        var message = Array(state.utf8)
        let length = addressLength
        return message.withUnsafeMutableBytes { body in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, length) == body.count
                }
            }
        }
    }
}
