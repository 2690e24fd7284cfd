#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CPages

/// Copies `count` bytes. Keys, literals and tiny values are short: up to 16 bytes, two
/// overlapping loads and stores beat a call into memmove, and a byte loop.
@inline(__always)
func copyBytes(_ from: UnsafePointer<UInt8>, _ count: Int, to out: UnsafeMutablePointer<UInt8>) {
    let source = UnsafeRawPointer(from), target = UnsafeMutableRawPointer(out)
    if count >= 8 {
        guard count <= 16 else { return out.update(from: from, count: count) }
        let head = source.loadUnaligned(as: UInt64.self)
        let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        target.storeBytes(of: head, as: UInt64.self)
        target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
    } else if count >= 4 {
        let head = source.loadUnaligned(as: UInt32.self)
        let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        target.storeBytes(of: head, as: UInt32.self)
        target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
    } else {
        for k in 0..<count { out[k] = from[k] }
    }
}

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

/// A growable byte buffer written through a raw pointer: no copy-on-write or
/// uniqueness checks per append, which Array pays on every small write. Owned
/// scratch memory (`PageStorage`), hence `~Copyable`.
struct ByteBuffer: ~Copyable {
    private var storage: PageStorage
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// Writing into the caller's memory (`init(into:)`), not `storage`.
    private(set) var isBorrowed = false

    init(capacity: Int) {
        storage = PageStorage(bytes: capacity)
        self.capacity = storage.bytes
        base = storage.base.assumingMemoryBound(to: UInt8.self)
    }

    /// Writes into `memory` (e.g. an array being initialized, so that the result needs no
    /// copy) until it must grow; from then on into storage of its own.
    init(into memory: UnsafeMutableBufferPointer<UInt8>) {
        storage = PageStorage(bytes: 0)
        base = memory.baseAddress!
        capacity = memory.count
        isBorrowed = true
    }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    mutating func grow(_ extra: Int) {
        if isBorrowed {
            storage = PageStorage(bytes: max(capacity * 2, count + extra))
            storage.base.copyMemory(from: base, byteCount: count)
            isBorrowed = false
        } else {
            storage.grow(to: max(capacity * 2, count + extra))
        }
        base = storage.base.assumingMemoryBound(to: UInt8.self)
        capacity = storage.bytes
    }

    /// Counts bytes written straight through `base` after a `reserve`.
    @inline(__always)
    mutating func didWrite(upTo end: Int) { count = end }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        copyBytes(source, bytes.count, to: base + count)
        count += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `"…"` for valid UTF-8 bytes, escaped by the one JSON escape policy.
    mutating func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Short strings (most keys and values) in one pass into room for the worst case;
        // long ones measured first, so the room reserved is what they take.
        let length = bytes.count <= 256 ? 6 * bytes.count + 2 : JSONEscaping.quotedLength(bytes)
        reserve(length)
        count += JSONEscaping.writeQuoted(bytes, to: base + count)
    }

    /// Copies `range` of this buffer to its end (the source may move while growing).
    mutating func appendCopy(of range: Range<Int>) {
        reserve(range.count)
        (base + count).update(from: base + range.lowerBound, count: range.count)
        count += range.count
    }

    mutating func insert(_ byte: UInt8, at index: Int) {
        reserve(1)
        (base + index + 1).update(from: base + index, count: count - index)
        base[index] = byte
        count += 1
    }

    mutating func removeLast(_ k: Int) { count -= k }

    /// Keeps the first `n` bytes.
    mutating func truncate(to n: Int) { count = n }

    subscript(_ i: Int) -> UInt8 { base[i] }

    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}

/// A growable array of plain values (`BitwiseCopyable`) on `PageStorage`, for the large
/// per-element records a transcoder keeps: Array's growth holds the old and the new
/// storage at once (1.5× its size at the peak); this does not.
struct FlatArray<Element: BitwiseCopyable>: ~Copyable {
    private var storage: PageStorage
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        storage = PageStorage(bytes: max(capacity, 16) * MemoryLayout<Element>.stride)
        self.capacity = storage.bytes / MemoryLayout<Element>.stride
        base = storage.base.assumingMemoryBound(to: Element.self)
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        base[count] = element
        count += 1
    }

    mutating func grow() {
        storage.grow(to: capacity * 2 * MemoryLayout<Element>.stride)
        capacity = storage.bytes / MemoryLayout<Element>.stride
        base = storage.base.assumingMemoryBound(to: Element.self)
    }

    mutating func removeLast(_ k: Int) { count -= k }

    /// Keeps the first `n` elements.
    mutating func truncate(to n: Int) { count = n }

    // Addressors: `frames[p].members += 1` updates one field in place.
    subscript(_ i: Int) -> Element {
        unsafeAddress { UnsafePointer(base + i) }
        nonmutating unsafeMutableAddress { base + i }
    }
}
