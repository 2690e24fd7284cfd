internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif

/// The body as libxml2's input: it copies what it asks for into its own buffer.
struct XMLInputSource {
    var next: UnsafePointer<UInt8>
    var left: Int

    static let read: xmlInputReadCallback = { context, buffer, length in
        let source = context!.assumingMemoryBound(to: XMLInputSource.self)
        let n = min(Int(length), source.pointee.left)
        guard n > 0, let buffer else { return 0 }
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.pointee.next, byteCount: n)
        source.pointee.next += n
        source.pointee.left -= n
        return Int32(n)
    }
}

/// An open `/dev/null` stream, shared for the process's lifetime.
final class DiscardFile: @unchecked Sendable {
    let file: UnsafeMutableRawPointer?
    init() { file = UnsafeMutableRawPointer(fopen("/dev/null", "w")) }
}
