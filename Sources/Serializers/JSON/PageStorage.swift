#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CPages

/// Raw storage that grows without holding two large copies of itself. It starts on
/// malloc (whose freed memory the daemon's allocator settings keep for reuse, so a buffer
/// sized right from the start costs no page faults); once it must grow past 256 KiB it
/// moves to a page mapping of its own, grown by `mremap` (pages remapped, not copied) and
/// returned to the kernel when freed. A growing buffer's peak is then the pages it wrote,
/// not 1.5–3× that across each doubling. (Mapping from the start measured 10 % slower on
/// the XML benchmark: every transcode faulted its output pages in anew.)
struct PageStorage: ~Copyable {
    static let mapFrom = 256 << 10
    private(set) var base: UnsafeMutableRawPointer
    private(set) var bytes: Int
    private var mapped = false

    init(bytes: Int) {
        self.bytes = max(bytes, 64)
        guard let p = malloc(self.bytes) else { fatalError("out of memory allocating \(self.bytes) bytes") }
        base = p
    }

    deinit {
        if mapped { serializerd_unmap(base, bytes) } else { free(base) }
    }

    mutating func grow(to newBytes: Int) {
        let moved: UnsafeMutableRawPointer?
        if mapped {
            moved = serializerd_remap(base, bytes, newBytes)
        } else if newBytes >= Self.mapFrom {
            // Leaving malloc: one copy of a block under 256 KiB.
            moved = serializerd_map(newBytes)
            if let moved { moved.copyMemory(from: base, byteCount: bytes); free(base); mapped = true }
        } else {
            moved = realloc(base, newBytes)
        }
        guard let moved else { fatalError("out of memory growing a buffer to \(newBytes) bytes") }
        base = moved
        bytes = newBytes
    }
}
