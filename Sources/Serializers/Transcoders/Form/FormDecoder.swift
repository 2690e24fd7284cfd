internal import CPages
import HTTPCore

/// Decodes `application/x-www-form-urlencoded` into a JSON object, the inverse of
/// AF's query-string encoding: `a=1&b[]=x&c[d]=y` → `{"a":"1","b":["x"],"c":{"d":"y"}}`.
///
/// A bare key (`a`) is null, `a=` is the empty string, `+` is a space. Key order is
/// first appearance; a repeated plain key keeps the last value; `a[][k]` starts a
/// new object in the array when the last one already has `k` (Rack's rule). A key
/// used both as a scalar and as a container is an error, not a silent overwrite.
///
/// Bounded work (DESIGN §5): a key nests at most `maxDepth` levels (`a[b][c]` is three),
/// and inserting a key walks its path once, so time and memory stay linear in the body.
public enum FormDecoder {
    public static func decode(_ body: [UInt8], charset: String? = nil,
                              maxDepth: Int = JSONReadOptions.defaultMaxDepth) throws(TranscodeError) -> JSONValue {
        try transcode(body, charset: charset, maxDepth: maxDepth, budget: OutputBudget(input: body.count, cap: .max)).value
    }

    /// Straight to JSON bytes, charging `budget` as they are written.
    public static func transcode(_ body: [UInt8], charset: String? = nil, maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                                 budget: OutputBudget) throws(TranscodeError) -> NormalizedJSON {
        var tree = try FormTree(body, charset: charset, maxDepth: maxDepth)
        return NormalizedJSON(trusted: try tree.write(budget: budget))
    }
}

/// The decoded form as flat arrays: every key and value decoded once into `text`, nodes
/// as parallel Int32 columns (25 bytes a node), members found through one open-addressed
/// table keyed by (parent, key bytes) with a secret-seeded hash (`KeyHash`: no flooding).
/// No object or String per field: a body of tiny fields costs a few dozen bytes each.
struct FormTree: ~Copyable {
    enum Kind: UInt8 { case null, string, array, object }
    static let none: Int32 = -1

    /// Decoded keys and values, back to back.
    var text: ByteBuffer
    // Columns on `realloc` (FlatArray): growing one never holds two copies of it.
    var kind = FlatArray<Kind>()
    /// Leaf: its value's range in `text`. Container: first and last child.
    var a = FlatArray<Int32>(), b = FlatArray<Int32>()
    var next = FlatArray<Int32>()
    /// An object member's key range in `text`; the parent, for the table's key.
    var keyStart = FlatArray<Int32>(), keyEnd = FlatArray<Int32>()
    var parent = FlatArray<Int32>()
    var table: MemberTable
    var used = 0
    var lastMember: Int32 = -1
    /// How many fields ahead a top-level key's table slot is prefetched: a body of
    /// distinct keys misses the cache on every insert, and these misses then overlap.
    static let prefetchDistance = 8
    var lastPrefetched = 0..<0

    // Scratch for one field: its key's segments as ranges of `text`, the first
    // `segmentCount` of them (the array never shrinks: no call into Array per field).
    var segments: [(Int32, Int32)] = []
    var segmentCount = 0

    init(_ body: [UInt8], charset: String?, maxDepth: Int) throws(TranscodeError) {
        // Sized for one member per field (`&` + 1) at three-quarters load, so a form of
        // distinct keys never rehashes; pages of a large table that no key lands on are
        // never touched (it is mapped, not zeroed).
        var fields = 1
        for byte in body where byte == UInt8(ascii: "&") { fields += 1 }
        table = MemberTable(slotsFor: fields * 4 / 3 + 1)
        text = ByteBuffer(capacity: body.count)
        _ = addNode(.object, parent: Self.none, key: (0, 0))
        let utf8 = charset.map { ["utf-8", "utf8"].contains($0.lowercased()) } ?? true
        guard body.count < Int(Int32.max) / 2 else { throw TranscodeError("form body too large to decode") }
        try body.withUnsafeBufferPointer { (p) throws(TranscodeError) in
            var start = 0
            var ahead = 0
            for _ in 0..<Self.prefetchDistance { ahead = prefetch(p, ahead) }
            while start <= p.count {
                ahead = prefetch(p, ahead)
                var end = start
                while end < p.count && p[end] != UInt8(ascii: "&") { end += 1 }
                if end > start { try field(p, start, end, charset: utf8 ? nil : charset, maxDepth: maxDepth) }
                start = end + 1
            }
        }
    }

    /// Prefetches the table slot of the top-level key of the field at `from` (when the
    /// raw key is its decoded form: no escapes, and not the key just prefetched, as in
    /// `a[]=1&a[]=2…`); returns where the next field starts.
    mutating func prefetch(_ p: UnsafeBufferPointer<UInt8>, _ from: Int) -> Int {
        guard from < p.count else { return from }
        var end = from, keyEnd = -1, plain = true
        while end < p.count {
            let c = p[end]
            if c == UInt8(ascii: "&") { break }
            if keyEnd < 0 {
                if c == UInt8(ascii: "[") || c == UInt8(ascii: "=") { keyEnd = end }
                else if c == UInt8(ascii: "%") || c == UInt8(ascii: "+") { plain = false }
            }
            end += 1
        }
        if keyEnd < 0 { keyEnd = end }
        let key = UnsafeBufferPointer(rebasing: p[from..<keyEnd])
        if plain && !key.isEmpty && !(key.count == lastPrefetched.count
                                      && Self.equal(key.baseAddress!, p.baseAddress! + lastPrefetched.lowerBound, key.count)) {
            lastPrefetched = from..<keyEnd
            let h = Self.hash(0, UnsafeRawBufferPointer(key))
            serializerd_prefetch(table.slots + (Int(h) & (table.count - 1)))
        }
        return end + 1
    }

    // MARK: decoding one field

    mutating func field(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, charset: String?, maxDepth: Int) throws(TranscodeError) {
        var eq = start
        while eq < end && p[eq] != UInt8(ascii: "=") { eq += 1 }
        let key = try decoded(p, start, eq, charset: charset, field: start)
        var value: (Int32, Int32)? = nil
        if eq < end { value = try decoded(p, eq + 1, end, charset: charset, field: eq + 1) }
        splitKey(key)
        guard segmentCount <= maxDepth else {
            throw TranscodeError("form field starting at byte \(start) nests \(segmentCount) levels deep, deeper than the limit of \(maxDepth) (limits.max_json_depth)")
        }
        try insert(value, keyRange: key)
    }

    /// Percent-decodes `p[from..<to]` onto `text`; returns its range there.
    mutating func decoded(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int, charset: String?, field: Int) throws(TranscodeError) -> (Int32, Int32) {
        let begin = text.count
        var i = from
        // Most fields have no escapes: one bulk copy.
        var plain = true
        for k in from..<to where p[k] == UInt8(ascii: "%") || p[k] == UInt8(ascii: "+") { plain = false; break }
        if plain {
            text.append(UnsafeBufferPointer(rebasing: p[from..<to]))
            i = to
        }
        while i < to {
            let c = p[i]
            if c == UInt8(ascii: "+") {
                text.append(0x20)
            } else if c == UInt8(ascii: "%") {
                guard i + 2 < to, let byte = Percent.escapedByte(p, at: i) else {
                    throw TranscodeError("invalid percent-escape at byte \(i)")
                }
                text.append(byte)
                i += 2
            } else {
                text.append(c)
            }
            i += 1
        }
        if let charset {
            let raw = Array(UnsafeBufferPointer(start: text.base + begin, count: text.count - begin))
            text.removeLast(text.count - begin)
            do throws(TranscodeError) {
                text.append(try TextDecoding.utf8(raw, charset: charset))
            } catch {
                throw TranscodeError("\(error.description) of the field starting at byte \(field)")
            }
        } else if let bad = UTF8Validation.firstInvalidOffset(UnsafeBufferPointer(start: text.base + begin, count: text.count - begin)) {
            throw TranscodeError("invalid UTF-8 at byte \(bad) of the field starting at byte \(field)")
        }
        return (Int32(begin), Int32(text.count))
    }

    /// `a[b][]` → a, b, (empty); a key without well-formed brackets is taken whole.
    mutating func splitKey(_ key: (Int32, Int32)) {
        let lo = Int(key.0), hi = Int(key.1)
        var open = lo
        while open < hi && text[open] != UInt8(ascii: "[") { open += 1 }
        guard open < hi, open != lo, text[hi - 1] == UInt8(ascii: "]") else {
            restartSegments(key)
            return
        }
        restartSegments((key.0, Int32(open)))
        var at = open
        while at < hi && text[at] == UInt8(ascii: "[") {
            var close = at + 1
            while close < hi && text[close] != UInt8(ascii: "]") { close += 1 }
            guard close < hi else { restartSegments(key); return }
            pushSegment((Int32(at + 1), Int32(close)))
            at = close + 1
        }
        if at != hi { restartSegments(key) }
    }

    /// The segment list starts over with `first` (without a call into Array's generic
    /// `removeAll` per field).
    mutating func restartSegments(_ first: (Int32, Int32)) {
        segmentCount = 0
        pushSegment(first)
    }

    mutating func pushSegment(_ segment: (Int32, Int32)) {
        if segmentCount < segments.count { segments[segmentCount] = segment } else { segments.append(segment) }
        segmentCount += 1
    }

    // MARK: the tree

    mutating func addNode(_ k: Kind, parent p: Int32, key: (Int32, Int32)) -> Int32 {
        let id = Int32(kind.count)
        kind.append(k)
        a.append(Self.none); b.append(Self.none); next.append(Self.none)
        keyStart.append(key.0); keyEnd.append(key.1)
        parent.append(p)
        if p >= 0 {
            // Linked as the parent's last child.
            if a[Int(p)] < 0 { a[Int(p)] = id } else { next[Int(b[Int(p)])] = id }
            b[Int(p)] = id
        }
        return id
    }

    // The lookups below are `mutating` only to take `self` by address: a borrowing call
    // passes this 456-byte struct by value, a memcpy per call on the per-field path.
    mutating func hash(_ p: Int32, _ key: (Int32, Int32)) -> UInt32 {
        Self.hash(p, UnsafeRawBufferPointer(start: text.base + Int(key.0), count: Int(key.1 - key.0)))
    }

    @inline(__always)
    static func hash(_ p: Int32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let h = KeyHash.hash(bytes, scope: UInt64(UInt32(bitPattern: p)))
        return UInt32(truncatingIfNeeded: h ^ h >> 32)
    }

    mutating func sameKey(_ node: Int32, _ key: (Int32, Int32)) -> Bool {
        let s = Int(keyStart[Int(node)]), e = Int(keyEnd[Int(node)])
        guard e - s == Int(key.1 - key.0) else { return false }
        return Self.equal(text.base + s, text.base + Int(key.0), e - s)
    }

    /// Byte equality, inline: keys are short, and a call into memcmp cost more than this.
    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i + 8 <= n {
            if UnsafeRawPointer(a).loadUnaligned(fromByteOffset: i, as: UInt64.self) != UnsafeRawPointer(b).loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < n {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// The member of object `p` named `key`, if any; else the table slot to claim. A slot
    /// holds the key's hash beside the node (node + 1; 0 is empty), so a probe touches the
    /// node's columns only on a likely match, and growing never hashes a key again.
    mutating func find(_ p: Int32, _ key: (Int32, Int32), _ h: UInt32) -> (Int32?, Int) {
        let mask = table.count - 1
        var slot = Int(h) & mask
        while true {
            let entry = table[slot]
            if entry == 0 { return (nil, slot) }
            if UInt32(truncatingIfNeeded: entry >> 32) == h {
                let node = Int32(truncatingIfNeeded: entry) - 1
                if parent[Int(node)] == p && sameKey(node, key) { return (node, slot) }
            }
            slot = (slot + 1) & mask
        }
    }

    mutating func find(_ p: Int32, _ key: (Int32, Int32)) -> Int32? { find(p, key, hash(p, key)).0 }

    mutating func member(_ p: Int32, _ key: (Int32, Int32), creating k: Kind) -> (Int32, created: Bool) {
        // `a[]=1&a[]=2…` asks for the same member again and again: no hashing for that.
        if lastMember >= 0, parent[Int(lastMember)] == p, sameKey(lastMember, key) { return (lastMember, false) }
        let (node, created) = hashedMember(p, key, creating: k)
        lastMember = node
        return (node, created)
    }

    mutating func hashedMember(_ p: Int32, _ key: (Int32, Int32), creating k: Kind) -> (Int32, created: Bool) {
        let h = hash(p, key)
        var (found, slot) = find(p, key, h)
        if let found { return (found, false) }
        // Grown at three-quarters full: linear probing stays short, and the table is
        // 11-21 bytes a member rather than 16-32.
        if (used + 1) * 4 > table.count * 3 {
            grow()
            slot = find(p, key, h).1
        }
        let id = addNode(k, parent: p, key: key)
        table[slot] = UInt64(h) << 32 | UInt64(UInt32(id) + 1)
        used += 1
        return (id, true)
    }

    mutating func grow() {
        let bigger = MemberTable(slotsFor: table.count * 2)
        let mask = bigger.count - 1
        for k in 0..<table.count where table[k] != 0 {
            let entry = table[k]
            var slot = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
            while bigger[slot] != 0 { slot = (slot + 1) & mask }
            bigger[slot] = entry
        }
        table = bigger
    }

    mutating func conflict(_ key: (Int32, Int32)) -> TranscodeError {
        let shown = String(decoding: UnsafeBufferPointer(start: text.base + Int(key.0), count: Int(key.1 - key.0)), as: UTF8.self).prefix(200)
        return TranscodeError("form field '\(shown)' conflicts with an earlier field of another shape")
    }

    mutating func setLeaf(_ node: Int32, _ value: (Int32, Int32)?) {
        kind[Int(node)] = value == nil ? .null : .string
        a[Int(node)] = value?.0 ?? Self.none
        b[Int(node)] = value?.1 ?? Self.none
    }

    /// Whether `segments[from...]` already leads to a value under `node` (Rack's "key taken").
    mutating func occupied(_ node: Int32, from: Int) -> Bool {
        var current = node
        for k in from..<segmentCount {
            let name = segments[k]
            guard name.1 > name.0, kind[Int(current)] == .object, let next = find(current, name) else { return false }
            if k == segmentCount - 1 { return true }
            current = next
        }
        return false
    }

    /// Inserts a value at `segments`, walking down level by level.
    mutating func insert(_ value: (Int32, Int32)?, keyRange: (Int32, Int32)) throws(TranscodeError) {
        var node: Int32 = 0
        var k = 0
        while true {
            let name = segments[k]
            if k == segmentCount - 1 {
                let (leaf, created) = member(node, name, creating: .null)
                guard created || kind[Int(leaf)] == .null || kind[Int(leaf)] == .string else { throw conflict(keyRange) }
                setLeaf(leaf, value)
                return
            }
            if segments[k + 1].1 == segments[k + 1].0 {
                let (array, _) = member(node, name, creating: .array)
                guard kind[Int(array)] == .array else { throw conflict(keyRange) }
                if k + 2 == segmentCount {
                    setLeaf(addNode(.null, parent: array, key: (0, 0)), value)
                    return
                }
                let last = b[Int(array)]
                if last >= 0, kind[Int(last)] == .object, !occupied(last, from: k + 2) {
                    node = last
                } else {
                    node = addNode(.object, parent: array, key: (0, 0))
                }
                k += 2
                continue
            }
            let (object, _) = member(node, name, creating: .object)
            guard kind[Int(object)] == .object else { throw conflict(keyRange) }
            node = object
            k += 1
        }
    }
}
