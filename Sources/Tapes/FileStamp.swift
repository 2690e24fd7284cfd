#if canImport(Glibc)
import Glibc
#endif
internal import CPages

/// Which file a path held when a tape last read or wrote it: another process (`tape
/// import`, an editor) changing it shows as a different stamp.
struct FileStamp: Equatable, Sendable {
    var device: UInt64 = 0, inode: UInt64 = 0, size: Int64 = -1, seconds = 0, nanoseconds = 0

    init() {}

    init(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}
