#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer written through a raw pointer: no copy-on-write or
/// uniqueness checks per append, which Array pays on every small write. Owned
/// scratch memory, hence `~Copyable`, freed in `deinit`. It grows with `realloc`,
/// which moves a large (mmapped) block by remapping its pages: no second copy of the
/// buffer exists while it grows, so its peak is its capacity.
struct ByteBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = malloc(self.capacity)!.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(base) }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        guard let moved = realloc(base, newCapacity) else { fatalError("out of memory growing a buffer to \(newCapacity) bytes") }
        base = moved.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

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
        if bytes.count <= 16 {
            // Keys and literals: a byte loop beats a call into memmove at this size.
            for k in 0..<bytes.count { base[count + k] = source[k] }
        } else {
            (base + count).update(from: source, count: bytes.count)
        }
        count += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `"…"` for valid UTF-8 bytes, escaped by the one JSON escape policy.
    mutating func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        let length = JSONEscaping.quotedLength(bytes)
        reserve(length)
        JSONEscaping.writeQuoted(bytes, to: base + count)
        count += length
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

    subscript(_ i: Int) -> UInt8 { base[i] }

    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}

/// A growable array of plain values (`BitwiseCopyable`) on `realloc`, for the large
/// per-element records a transcoder keeps: Array's growth holds the old and the new
/// storage at once (1.5× its size at the peak); this does not.
struct FlatArray<Element: BitwiseCopyable>: ~Copyable {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 16)
        base = malloc(self.capacity * MemoryLayout<Element>.stride)!.assumingMemoryBound(to: Element.self)
    }

    deinit { free(base) }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity {
            capacity *= 2
            guard let moved = realloc(base, capacity * MemoryLayout<Element>.stride) else { fatalError("out of memory") }
            base = moved.assumingMemoryBound(to: Element.self)
        }
        base[count] = element
        count += 1
    }

    mutating func removeLast(_ k: Int) { count -= k }

    subscript(_ i: Int) -> Element {
        get { base[i] }
        nonmutating set { base[i] = newValue }
    }
}
