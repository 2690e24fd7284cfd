#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CPages

/// `FormTree`'s open-addressed table: a power-of-two count of 8-byte slots, zeroed. A
/// large one is a page mapping, so the kernel zeroes only the pages a key lands on.
struct MemberTable: ~Copyable {
    static let mapFrom = 256 << 10
    let slots: UnsafeMutablePointer<UInt64>
    let count: Int
    private let mapped: Bool

    /// At least `minimum` slots (and 64).
    init(slotsFor minimum: Int) {
        var count = 64
        while count < minimum { count *= 2 }
        self.count = count
        let bytes = count * MemoryLayout<UInt64>.stride
        mapped = bytes >= Self.mapFrom
        let raw = mapped ? serializerd_map(bytes) : calloc(count, MemoryLayout<UInt64>.stride)
        guard let raw else { fatalError("out of memory allocating a \(bytes)-byte table") }
        slots = raw.bindMemory(to: UInt64.self, capacity: count)
    }

    deinit {
        if mapped { serializerd_unmap(slots, count * MemoryLayout<UInt64>.stride) } else { free(slots) }
    }

    subscript(_ i: Int) -> UInt64 {
        get { slots[i] }
        nonmutating set { slots[i] = newValue }
    }
}
