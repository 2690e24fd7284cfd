internal import CLibevent
#if canImport(Glibc)
import Glibc
#endif

/// A bound, listening, non-blocking TCP socket with SO_REUSEPORT, so every worker can
/// own one on the same address and the kernel spreads connections between them.
public enum ListeningSocket {
    /// Throws `bind ADDR: address already in use` when any socket — another process's,
    /// another serializerd's — already listens on the address. SO_REUSEPORT would let the
    /// workers' bind succeed beside it and split the traffic with a stranger; a probe
    /// bound without it cannot share, so it finds the address taken.
    public static func checkAvailable(host: String, port: Int) throws(EventLoopError) {
        guard port != 0 else { return }   // the kernel picks a free one
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket") }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, host: host, port: port, v6: v6) == 0 else { throw failure("bind \(display(host, port))") }
    }

    static func display(_ host: String, _ port: Int) -> String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Which file a Unix socket is: what the daemon created, told apart from whatever
    /// another process may have put at the same path since.
    public struct FileIdentity: Sendable, Equatable {
        public let device: UInt64
        public let inode: UInt64

        /// lstat(2) of `path`, when it is a socket.
        public static func ofSocket(at path: String) -> FileIdentity? {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
            return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
    }

    /// A listening Unix socket at `path`, mode 0660, and the identity of the file it
    /// made. A stale socket file (nobody accepts on it) is replaced; a live one is
    /// "address already in use"; anything else at the path (a regular file, a directory,
    /// a link) is never touched.
    public static func openUnix(path: String) throws(EventLoopError) -> (fd: Int32, file: FileIdentity) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (k, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[k] = byte }
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw EventLoopError("listen unix:\(path): exists and is not a socket") }
            if isLive(address) { throw EventLoopError("bind unix:\(path): address already in use") }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket") }
        // bind(2) creates the file and fails with EADDRINUSE if anything got there first:
        // what it made is ours, and nothing else is ever replaced.
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let error = failure("bind unix:\(path)")
            close(fd)
            throw error
        }
        guard let file = FileIdentity.ofSocket(at: path) else {
            close(fd)
            throw EventLoopError("listen unix:\(path): the socket file vanished after bind")
        }
        chmod(path, 0o660)
        guard listen(fd, 1024) == 0 else {
            let error = failure("listen")
            close(fd)
            removeUnix(path: path, ifStill: file)
            throw error
        }
        return (fd, file)
    }

    /// Removes the socket file at `path` only while it is still `file`: a successor that
    /// bound the path after us keeps its socket.
    public static func removeUnix(path: String, ifStill file: FileIdentity) {
        if FileIdentity.ofSocket(at: path) == file { unlink(path) }
    }

    /// Something accepts connections on this Unix socket address.
    static func isLive(_ address: sockaddr_un) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var copy = address
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    static func bind(_ fd: Int32, host: String, port: Int, v6: Bool) -> Int32 {
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            return bindTo(fd, &address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        return bindTo(fd, &address)
    }

    /// Returns the descriptor and the bound port (the real one when `port` is 0).
    public static func open(host: String, port: Int) throws(EventLoopError) -> (fd: Int32, port: Int) {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        // Accepted sockets inherit it: evhttp would otherwise leave Nagle on, and replies
        // of several segments would wait ~40 ms for the client's delayed ACK.
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, host: host, port: port, v6: v6) == 0 else {
            let error = failure("bind \(display(host, port))")
            close(fd)
            throw error
        }
        guard listen(fd, 1024) == 0 else {
            let error = failure("listen")
            close(fd)
            throw error
        }
        return (fd, local(fd)?.port ?? port)
    }

    /// Checks a descriptor handed over by a service manager (socket activation) and
    /// makes it non-blocking and close-on-exec. Throws when it cannot be served on.
    public static func adopt(_ fd: Int32) throws(EventLoopError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw EventLoopError("descriptor \(fd) is not open") }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw EventLoopError("descriptor \(fd) is not a socket") }
        guard option(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) else { throw EventLoopError("descriptor \(fd) is not a stream (TCP) socket") }
        guard option(fd, SO_ACCEPTCONN) == 1 else { throw EventLoopError("descriptor \(fd) is not listening") }
        let family = local(fd)?.family
        guard family == AF_INET || family == AF_INET6 || family == AF_UNIX else {
            throw EventLoopError("descriptor \(fd) is not an IPv4, IPv6 or Unix socket")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The bound address as `host:port` (`[v6]:port` for IPv6).
    public static func localAddress(_ fd: Int32) -> String {
        guard let bound = local(fd) else { return "?" }
        let host = numericHost(bound.address)
        return bound.family == AF_INET6 ? "[\(host)]:\(bound.port)" : "\(host):\(bound.port)"
    }

    /// An IPv4 or IPv6 address as text (`127.0.0.1`, `::1`), without the port.
    static func numericHost(_ storage: sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = storage
        withUnsafePointer(to: &raw) { pointer in
            if Int32(storage.ss_family) == AF_INET6 {
                _ = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafePointer(to: v6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) }
                }
            } else {
                _ = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func option(_ fd: Int32, _ name: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : -1
    }

    /// getsockname(2): the family, the port and the raw address; nil when it fails.
    static func local(_ fd: Int32) -> (family: Int32, port: Int, address: sockaddr_storage)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0 else { return nil }
        // The port sits at the same offset in sockaddr_in and sockaddr_in6.
        let port = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
        return (Int32(storage.ss_family), port, storage)
    }

    /// bind(2) for a sockaddr_in or sockaddr_in6.
    static func bindTo<Address>(_ fd: Int32, _ address: inout Address) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    static func failure(_ what: String) -> EventLoopError {
        // "address already in use", as the rest of a message reads.
        let reason = String(cString: strerror(errno))
        return EventLoopError("\(what): \(reason.prefix(1).lowercased() + reason.dropFirst())")
    }
}
