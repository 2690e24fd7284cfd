#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import HTTPCore

/// Whole-buffer reads and writes on file descriptors. No stdio: its buffering
/// reorders output under pipes, and Swift 6 forbids the `stdout` global anyway.
enum StandardStreams {
    static func write(_ bytes: [UInt8], fd: Int32 = 1) {
        bytes.withUnsafeBufferPointer { buf in
            var offset = 0
            while offset < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + offset, buf.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    /// The reason reads as the OS gives it (`No such file or directory`, `Permission
    /// denied`, `Is a directory`), so operators see what to fix. A regular file is read
    /// in one piece into an array of its size (`fstat`): no regrowth, no second copy; with
    /// `BodyRoom` to spare. With a `limit`, input larger than it throws `InputTooLarge`:
    /// a regular file before anything is read, a pipe or device (stdin, `/dev/zero`)
    /// after at most one read past the limit.
    static func readAll(path: String, limit: Int? = nil) throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var info = stat()
        let size = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
        if let limit, size > limit { throw InputTooLarge(limit: limit) }
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: size + BodyRoom.bytes) { buffer, count in
            count = 0
            while count < size {
                let n = read(fd, buffer.baseAddress! + count, size - count)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failure = errno }
                if n <= 0 { break }
                count += n
            }
        }
        guard failure == 0 else { throw ValidationError("cannot read '\(path)': \(String(cString: strerror(failure)))") }
        // A pipe, or a file that grew since fstat: read on to the end (or past the limit).
        var chunk = [UInt8](repeating: 0, count: min(1 << 20, (limit ?? Int.max - 1) + 1))
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ValidationError("cannot read '\(path)': \(String(cString: strerror(errno)))") }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
            if let limit, bytes.count > limit { throw InputTooLarge(limit: limit) }
        }
    }
}

/// Input over the limit a reader was given; nothing past one read beyond it was read.
struct InputTooLarge: Error {
    let limit: Int
}
