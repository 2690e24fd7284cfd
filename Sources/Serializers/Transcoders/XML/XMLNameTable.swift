/// Element and attribute names as quoted JSON keys, computed once per distinct name.
/// libxml2 interns names, so a small cache on the name pointers answers almost
/// every lookup without hashing strings.
struct NameTable: ~Copyable {
    struct Key: Hashable {
        var prefix: UInt
        var local: UInt
        var attribute: Bool
    }

    struct Span {
        var lowerBound: Int
        var count: Int
    }

    /// One cache slot: a key and its id (an empty slot's key is all zero).
    struct Slot {
        var key: Key
        var id: Int
    }

    /// Every quoted key, back to back; `ranges[id]` locates one. FlatArrays: the lookups
    /// run once per element and attribute, without bounds or uniqueness checks.
    private var bytes = ByteBuffer(capacity: 1024)
    private var ranges = FlatArray<Span>()
    private var ids: [Key: Int] = [:]
    private var cache = FlatArray<Slot>(capacity: 256)

    init() {
        for _ in 0..<256 { cache.append(Slot(key: Key(prefix: 0, local: 0, attribute: false), id: -1)) }
    }

    var count: Int { ranges.count }

    /// The quoted key; valid until the next new name is added.
    func quoted(_ id: Int) -> UnsafeBufferPointer<UInt8> {
        let range = ranges[id]
        return UnsafeBufferPointer(start: bytes.base + range.lowerBound, count: range.count)
    }

    /// The name without quotes (for force_array paths; attribute names never get here).
    func unquoted(_ id: Int) -> UnsafeBufferPointer<UInt8> {
        let range = ranges[id]
        return UnsafeBufferPointer(start: bytes.base + range.lowerBound + 1, count: range.count - 2)
    }

    /// Inlined into the element and attribute paths: the cache hit is a few instructions.
    /// The cache is two-way: a name's slot pair is its hash's top seven bits, so two names
    /// sharing one (likely among a document's dozen or two, with 128 pairs) both stay.
    @inline(__always)
    mutating func id(prefix: UnsafePointer<UInt8>?, local: UnsafePointer<UInt8>, attribute: Bool) -> Int {
        let key = Key(prefix: UInt(bitPattern: prefix), local: UInt(bitPattern: local), attribute: attribute)
        // Interned names sit a few bytes apart, so mix all pointer bits (Fibonacci hashing).
        let mixed = (key.local ^ (key.prefix &* 31) ^ (attribute ? 1 : 0)) &* 0x9E37_79B9_7F4A_7C15
        let pair = cache.base + Int(truncatingIfNeeded: mixed >> 57) * 2
        // An empty slot's key has a null name, which no real key has.
        if pair[0].key == key { return pair[0].id }
        if pair[1].key == key { return pair[1].id }
        return miss(key, pair: pair, prefix: prefix, local: local)
    }

    /// The most recent name goes first in its pair; the other one stays second.
    @inline(never)
    private mutating func miss(_ key: Key, pair: UnsafeMutablePointer<Slot>, prefix: UnsafePointer<UInt8>?,
                               local: UnsafePointer<UInt8>) -> Int {
        let id = ids[key] ?? insert(key, prefix: prefix, local: local, attribute: key.attribute)
        pair[1] = pair[0]
        pair[0] = Slot(key: key, id: id)
        return id
    }

    private mutating func insert(_ key: Key, prefix: UnsafePointer<UInt8>?, local: UnsafePointer<UInt8>, attribute: Bool) -> Int {
        var name: [UInt8] = attribute ? [UInt8(ascii: "@")] : []
        if let prefix {
            name.append(contentsOf: UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            name.append(UInt8(ascii: ":"))
        }
        name.append(contentsOf: UnsafeBufferPointer(start: local, count: strlen(local)))
        let start = bytes.count
        name.withUnsafeBufferPointer { bytes.appendQuoted($0) }
        ranges.append(Span(lowerBound: start, count: bytes.count - start))
        ids[key] = ranges.count - 1
        return ranges.count - 1
    }
}

@inline(__always)
func strlen(_ p: UnsafePointer<UInt8>) -> Int {
    var n = 0
    while p[n] != 0 { n += 1 }
    return n
}
