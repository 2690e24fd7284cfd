#if canImport(Glibc)
import Glibc
#endif

/// Names for the XML fast path (XMLFastScanner), interned as libxml2 interns them: one
/// stable, NUL-terminated copy per distinct name, so equal names have equal pointers (what
/// the JSON builder's name cache keys on) and a small id (for per-name marks).
struct XMLNameInterner: ~Copyable {
    struct Entry {
        var hash: UInt32
        var length: Int32
        var id: Int32
        var name: UnsafePointer<UInt8>?
    }

    /// Open addressing, a power of two, at most half full.
    private var table = FlatArray<Entry>(capacity: 256)
    private var mask = 255
    private(set) var count = 0
    /// Copies of the names, in blocks that never move (pointers handed out stay valid).
    private var blocks: [UnsafeMutablePointer<UInt8>] = []
    private var free: UnsafeMutablePointer<UInt8>?
    private var freeLeft = 0
    static let blockSize = 16 << 10

    init() {
        for _ in 0...mask { table.append(Entry(hash: 0, length: 0, id: -1, name: nil)) }
    }

    deinit { for block in blocks { block.deallocate() } }

    /// FNV-1a, fed a byte at a time while the name is scanned.
    static let seed: UInt32 = 0x811C_9DC5
    @inline(__always)
    static func mix(_ hash: UInt32, _ byte: UInt8) -> UInt32 { (hash ^ UInt32(byte)) &* 0x0100_0193 }

    /// Slots one lookup may visit. A table at most half full averages under three; names
    /// crafted to collide (the hash is not keyed) would make every lookup walk them all,
    /// so past this the lookup gives up and the body goes to libxml2 (randomized hashing).
    static let maxProbes = 64

    /// The interned copy of `count` bytes at `name` whose `hash` was computed by `mix`, or
    /// nil after `maxProbes` slots.
    @inline(__always)
    mutating func intern(_ name: UnsafePointer<UInt8>, _ count: Int, hash: UInt32) -> (UnsafePointer<UInt8>, Int32)? {
        var slot = Int(truncatingIfNeeded: hash) & mask
        for _ in 0..<Self.maxProbes {
            let entry = table.base + slot
            guard let existing = entry.pointee.name else { return insert(name, count, hash: hash, at: slot) }
            if entry.pointee.hash == hash && Int(entry.pointee.length) == count && memcmp(existing, name, count) == 0 {
                return (existing, entry.pointee.id)
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    @inline(never)
    private mutating func insert(_ name: UnsafePointer<UInt8>, _ length: Int, hash: UInt32, at slot: Int) -> (UnsafePointer<UInt8>, Int32) {
        if freeLeft < length + 1 {
            let size = max(Self.blockSize, length + 1)
            let block = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
            blocks.append(block)
            free = block
            freeLeft = size
        }
        let copy = free!
        copy.update(from: name, count: length)
        copy[length] = 0
        free = copy + length + 1
        freeLeft -= length + 1
        let id = Int32(truncatingIfNeeded: count)
        table[slot] = Entry(hash: hash, length: Int32(truncatingIfNeeded: length), id: id, name: UnsafePointer(copy))
        count += 1
        if 2 * count > mask { rehash() }
        return (UnsafePointer(copy), id)
    }

    private mutating func rehash() {
        var bigger = FlatArray<Entry>(capacity: 2 * (mask + 1))
        for _ in 0..<(2 * (mask + 1)) { bigger.append(Entry(hash: 0, length: 0, id: -1, name: nil)) }
        let newMask = 2 * mask + 1
        for k in 0...mask where table[k].name != nil {
            var slot = Int(truncatingIfNeeded: table[k].hash) & newMask
            while bigger[slot].name != nil { slot = (slot + 1) & newMask }
            bigger[slot] = table[k]
        }
        table = bigger
        mask = newMask
    }
}

/// The byte-level rules of XML 1.0 the fast path checks itself.
enum XMLBytes {
    /// ASCII name characters after the first (non-ASCII names go to libxml2).
    @inline(__always)
    static func isNameByte(_ c: UInt8) -> Bool {
        (c | 0x20) &- 0x61 < 26 || c &- 0x30 < 10 || c == 0x2D || c == 0x2E || c == 0x5F
    }

    @inline(__always)
    static func isNameStart(_ c: UInt8) -> Bool { (c | 0x20) &- 0x61 < 26 || c == 0x5F }

    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D }

    /// The length of the UTF-8 sequence at `p[i]` (a byte >= 0x80) when it is well formed
    /// and encodes an XML `Char` (no surrogates, U+FFFE or U+FFFF), else 0.
    @inline(__always)
    static func charLength(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int {
        let c0 = p[i]
        @inline(__always) func tail(_ k: Int) -> UInt8 { i + k < n ? p[i + k] : 0 }
        if c0 < 0xC2 { return 0 }
        let c1 = tail(1)
        if c0 < 0xE0 { return c1 & 0xC0 == 0x80 ? 2 : 0 }
        let c2 = tail(2)
        if c0 < 0xF0 {
            guard c1 & 0xC0 == 0x80, c2 & 0xC0 == 0x80 else { return 0 }
            if c0 == 0xE0 && c1 < 0xA0 { return 0 }
            if c0 == 0xED && c1 >= 0xA0 { return 0 }
            if c0 == 0xEF && c1 == 0xBF && c2 >= 0xBE { return 0 }
            return 3
        }
        let c3 = tail(3)
        guard c0 < 0xF5, c1 & 0xC0 == 0x80, c2 & 0xC0 == 0x80, c3 & 0xC0 == 0x80 else { return 0 }
        if c0 == 0xF0 && c1 < 0x90 { return 0 }
        if c0 == 0xF4 && c1 >= 0x90 { return 0 }
        return 4
    }

    /// Whether a character reference's value is an XML `Char`.
    static func isChar(_ v: UInt32) -> Bool {
        v == 0x9 || v == 0xA || v == 0xD || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
            || (0x10000...0x10FFFF).contains(v)
    }

    /// `v` (an XML `Char`) as UTF-8 into `out`; returns the byte count.
    static func encode(_ v: UInt32, into out: UnsafeMutablePointer<UInt8>) -> Int {
        switch v {
        case ..<0x80:
            out[0] = UInt8(v)
            return 1
        case ..<0x800:
            out[0] = UInt8(0xC0 | v >> 6); out[1] = UInt8(0x80 | v & 0x3F)
            return 2
        case ..<0x10000:
            out[0] = UInt8(0xE0 | v >> 12); out[1] = UInt8(0x80 | (v >> 6) & 0x3F); out[2] = UInt8(0x80 | v & 0x3F)
            return 3
        default:
            out[0] = UInt8(0xF0 | v >> 18); out[1] = UInt8(0x80 | (v >> 12) & 0x3F)
            out[2] = UInt8(0x80 | (v >> 6) & 0x3F); out[3] = UInt8(0x80 | v & 0x3F)
            return 4
        }
    }
}
