#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CPages

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
