#if canImport(Glibc)
import Glibc
#endif
internal import CPages

/// Reading and writing tape files: a tape is read whole at load (bounded), and written
/// whole to a temporary file beside it that then replaces it, so a reader never sees half
/// a tape and a failed write leaves the last good one.
public enum TapeFile {
    /// The largest tape file serializerd reads.
    static let maxBytes = 256 << 20

    /// The file's bytes; nil when there is no file; an error when it is not a regular file
    /// (a symlink included), unreadable, or larger than `maxBytes`.
    static func read(_ path: String) throws(HARError) -> [UInt8]? {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw HARError("\(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw HARError("\(path) exists and is not a regular file") }
        guard info.st_size <= maxBytes else { throw HARError("\(path) is \(info.st_size) bytes, over the \(maxBytes)-byte limit for a tape") }
        return try readWhole(path, limit: maxBytes)
    }

    /// A file's bytes, refusing it once it is past `limit` (it may grow while read).
    static func readWhole(_ path: String, limit: Int) throws(HARError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HARError("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        // Room for the whole file at once: growing by doubling would briefly hold it twice.
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size > 0 { bytes.reserveCapacity(min(Int(info.st_size), limit) + 1) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw HARError("\(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes += chunk[0..<n]
            guard bytes.count <= limit else { throw HARError("\(path) grew past the \(limit)-byte limit while being read") }
        }
        return bytes
    }

    /// Makes `path` and any missing parent, each mode 0700; an existing directory is kept
    /// as it is. The error in words.
    public static func makeDirectory(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 { return info.st_mode & S_IFMT == S_IFDIR ? nil : "'\(path)' exists and is not a directory" }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty, parent != path, let failure = makeDirectory(parent) { return failure }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { return "'\(path)' cannot be created: \(String(cString: strerror(errno)))" }
        return nil
    }

    /// Writes `bytes` to `path` (mode 0600) through a temporary file and a rename; the
    /// error in words when it could not.
    static func write(_ bytes: [UInt8], to path: String) -> String? {
        write([bytes], to: path)
    }

    /// The same for a file given in pieces (a tape's entries), written through one small
    /// buffer: no copy of the whole file is ever made in memory. With `keeping`, the new
    /// file starts with that many bytes of the one it replaces, copied by the kernel (a
    /// tape growing by appends is not encoded again); the error when `path` is no longer
    /// the file `stamp` describes.
    static func write(_ pieces: [[UInt8]], to path: String, keeping prefix: (bytes: Int, stamp: FileStamp)? = nil) -> String? {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG { return "\(path) exists and is not a regular file" }
        var source: Int32 = -1
        if let prefix {
            source = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard source >= 0 else { return "\(path): \(String(cString: strerror(errno)))" }
            guard fstat(source, &info) == 0, UInt64(info.st_ino) == prefix.stamp.inode, Int64(info.st_size) == prefix.stamp.size,
                  prefix.bytes <= info.st_size else {
                close(source)
                return "\(path) changed while being appended to"
            }
        }
        defer { if source >= 0 { close(source) } }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return "\(temporary): \(String(cString: strerror(errno)))" }
        var failure: String?
        if let prefix {
            // The copy writes at explicit offsets: the pieces follow it.
            failure = copy(from: source, to: fd, bytes: prefix.bytes).map { "\(temporary): \($0)" }
            if failure == nil, lseek(fd, off_t(prefix.bytes), SEEK_SET) < 0 { failure = "\(temporary): \(String(cString: strerror(errno)))" }
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        func drain() {
            guard failure == nil else { return }
            buffer.withUnsafeBytes { all in
                var at = 0
                while at < all.count {
                    let n = Glibc.write(fd, all.baseAddress! + at, all.count - at)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = "\(temporary): \(String(cString: strerror(errno)))"
                        return
                    }
                    at += n
                }
            }
            buffer.removeAll(keepingCapacity: true)
        }
        for piece in pieces where failure == nil {
            if buffer.count + piece.count > 1 << 16 { drain() }
            if piece.count >= 1 << 16 { buffer = piece; drain(); buffer = []; buffer.reserveCapacity(1 << 16) } else { buffer += piece }
        }
        drain()
        if failure == nil, fsync(fd) != 0 { failure = "\(temporary): \(String(cString: strerror(errno)))" }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = "\(path): \(String(cString: strerror(errno)))" }
        if failure != nil { unlink(temporary) }
        return failure
    }
}

extension TapeFile {
    /// Copies the first `bytes` bytes of `source` to `target` (both at offset 0): in the
    /// kernel where it can (copy_file_range), else through a buffer; the error in words.
    static func copy(from source: Int32, to target: Int32, bytes: Int) -> String? {
        var inOffset: Int64 = 0, outOffset: Int64 = 0
        var left = bytes
        while left > 0 {
            let n = serializerd_copy_file_range(source, &inOffset, target, &outOffset, left)
            if n > 0 { left -= n; continue }
            if n == 0 { return "the tape ended \(left) bytes early" }
            if errno == EINTR { continue }
            if errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP { break }
            return String(cString: strerror(errno))
        }
        guard left > 0 else { return nil }
        // The fallback: pread/write from where copy_file_range stopped.
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while left > 0 {
            let n = chunk.withUnsafeMutableBytes { pread(source, $0.baseAddress, min($0.count, left), off_t(inOffset)) }
            if n < 0 { if errno == EINTR { continue }; return String(cString: strerror(errno)) }
            if n == 0 { return "the tape ended \(left) bytes early" }
            var at = 0
            while at < n {
                let w = chunk.withUnsafeBytes { pwrite(target, $0.baseAddress! + at, n - at, off_t(outOffset)) }
                if w < 0 { if errno == EINTR { continue }; return String(cString: strerror(errno)) }
                at += w
                outOffset += Int64(w)
            }
            inOffset += Int64(n)
            left -= n
        }
        return nil
    }
}
