import HTTPCore
#if canImport(Glibc)
import Glibc
#endif
internal import CPages

/// Map local: a file under a directory, never outside it.
enum MapDirectory {
    enum Found {
        case found([UInt8], String)
        case escapes(String)
        case missing
    }

    /// The file `path` (percent-encoded, after the route's prefix) names under `root`.
    /// Opened relative to the directory by the kernel in one step (`serializerd_open_beneath`),
    /// so a file swapped for a symlink between a check and the open cannot lead outside.
    static func file(root: String, path: String, maxBytes: Int) -> Found {
        let decoded = String(decoding: Percent.decode(Array(path.utf8)), as: UTF8.self)
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == ".." || $0 == "." }), !decoded.utf8.contains(0), !decoded.hasPrefix("/") else {
            return .escapes("the path '\(path)' leaves the route's map_dir")
        }
        guard !decoded.isEmpty, !decoded.hasSuffix("/"), !segments.contains(where: \.isEmpty) else { return .missing }
        let directory = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return .missing }
        defer { close(directory) }
        let fd = serializerd_open_beneath(directory, decoded)
        guard fd >= 0 else {
            return errno == EXDEV || errno == ELOOP ? .escapes("the path '\(path)' resolves outside the route's map_dir") : .missing
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= maxBytes else { return .missing }
        var body = [UInt8](repeating: 0, count: Int(info.st_size))
        var at = 0
        while at < body.count {
            let n = body.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + at, $0.count - at) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            at += n
        }
        return .found(Array(body[0..<at]), contentType(decoded))
    }

    /// The Content-Type a file's extension gives (DESIGN §2).
    static func contentType(_ path: String) -> String {
        let ext = path.split(separator: "/").last.flatMap { name in name.contains(".") ? name.split(separator: ".").last : nil }.map { $0.lowercased() } ?? ""
        switch ext {
        case "json": return "application/json"
        case "xml": return "application/xml"
        case "plist": return "application/x-plist"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        default: return "application/octet-stream"
        }
    }
}
