/// A growable byte buffer written through a raw pointer: no copy-on-write or
/// uniqueness checks per append, which Array pays on every small write. Owned
/// scratch memory, hence `~Copyable`, freed in `deinit`.
struct ByteBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
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
        (base + count).update(from: source, count: bytes.count)
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
