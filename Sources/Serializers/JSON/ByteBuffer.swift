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

extension Array where Element == UInt8 {
    /// Grows by `count` zero bytes, to be overwritten in place. Copied from a page of
    /// zeros: appending `repeatElement(0, count:)` goes a byte at a time.
    mutating func appendZeros(_ count: Int) {
        // Grown once, as one append of `count` would grow it (no more: the output budget's
        // memory bound counts on it), not once per page.
        if self.count + count > capacity { reserveCapacity(Swift.max(self.count + count, 2 * capacity)) }
        var left = count
        while left > 0 {
            let n = Swift.min(left, ZeroPage.size)
            append(contentsOf: UnsafeBufferPointer(start: ZeroPage.bytes, count: n))
            left -= n
        }
    }
}

/// Read-only zeros, made once.
enum ZeroPage {
    static let size = 4096
    nonisolated(unsafe) static let bytes: UnsafePointer<UInt8> = {
        let page = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        page.initialize(repeating: 0, count: size)
        return UnsafePointer(page)
    }()
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
