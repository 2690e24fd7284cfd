#if canImport(Glibc)
import Glibc
#endif

/// A bound, listening, non-blocking TCP socket with SO_REUSEPORT, so every worker can
/// own one on the same address and the kernel spreads connections between them.
public enum ListeningSocket {
    /// Returns the descriptor and the bound port (the real one when `port` is 0).
    public static func open(host: String, port: Int) throws(EventLoopError) -> (fd: Int32, port: Int) {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        // Accepted sockets inherit it; each request sets it again (see HTTPServer).
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            bound = bindTo(fd, &address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            bound = bindTo(fd, &address)
        }
        guard bound == 0 else {
            let error = failure("bind \(host):\(port)")
            close(fd)
            throw error
        }
        guard listen(fd, 1024) == 0 else {
            let error = failure("listen")
            close(fd)
            throw error
        }
        return (fd, boundPort(fd))
    }

    /// bind(2) for a sockaddr_in or sockaddr_in6.
    static func bindTo<Address>(_ fd: Int32, _ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    static func boundPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            _ = pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            // The port sits at the same offset in sockaddr_in and sockaddr_in6.
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    static func failure(_ what: String) -> EventLoopError {
        EventLoopError("\(what): \(String(cString: strerror(errno)))")
    }
}
