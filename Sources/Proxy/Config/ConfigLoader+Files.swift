import Glibc

extension ConfigLoader {
    /// A file the config names, read whole: a readable regular file of at most `maxBytes`
    /// (`what` names it in the error).
    static func regularFile(_ node: ConfigNode, path: String, maxBytes: Int, what: String) throws(ConfigError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw node.error("\(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw node.error("\(path) is not a regular file") }
        guard info.st_size <= maxBytes else {
            throw node.error("\(path) is \(info.st_size) bytes; \(what) here is at most \(maxBytes) bytes")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw node.error("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var at = 0
        while at < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + at, $0.count - at) }
            guard n > 0 else {
                if n < 0 && errno == EINTR { continue }
                throw node.error("\(path): \(n < 0 ? String(cString: strerror(errno)) : "shorter than its size")")
            }
            at += n
        }
        return bytes
    }
}
