#if canImport(Glibc)
import Glibc
#endif
internal import CPages

/// A mock's `file:`, read at load.
public enum MockFile {
    /// The file's bytes, nil when there is none; an error when it is not a regular file or
    /// larger than `limit` (limits.max_response_body).
    public static func read(_ path: String, limit: Int) throws(HARError) -> [UInt8]? {
        var info = stat()
        if stat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw HARError("\(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw HARError("\(path) is not a regular file") }
        guard info.st_size <= limit else { throw HARError("\(path) is \(info.st_size) bytes, over limits.max_response_body (\(limit))") }
        return try TapeFile.readWhole(path, limit: limit)
    }
}
