#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
        NormalizedJSON(trusted: try FormTree(body, charset: charset, maxDepth: maxDepth).write(budget: budget))
    }
}

/// The decoded form as flat arrays: every key and value decoded once into `text`, nodes
/// as parallel Int32 columns (25 bytes a node), members found through one open-addressed
/// table keyed by (parent, key bytes) with Swift's seeded hasher (no flooding). No object
/// or String per field: a body of tiny fields costs a few dozen bytes each, not hundreds.
struct FormTree: ~Copyable {
    enum Kind: UInt8 { case null, string, array, object }
    static let none: Int32 = -1

    /// Decoded keys and values, back to back.
    var text: [UInt8] = []
    // Columns on `realloc` (FlatArray): growing one never holds two copies of it.
    var kind = FlatArray<Kind>()
    /// Leaf: its value's range in `text`. Container: first and last child.
    var a = FlatArray<Int32>(), b = FlatArray<Int32>()
    var next = FlatArray<Int32>()
    /// An object member's key range in `text`; the parent, for the table's key.
    var keyStart = FlatArray<Int32>(), keyEnd = FlatArray<Int32>()
    var parent = FlatArray<Int32>()
    var table: [UInt64]
    var used = 0
    var lastMember: Int32 = -1
    let seed = Hasher()

    // Scratch for one field: its key's segments as ranges of `text`.
    var segments: [(Int32, Int32)] = []

    init(_ body: [UInt8], charset: String?, maxDepth: Int) throws(TranscodeError) {
        table = [UInt64](repeating: 0, count: 64)
        text.reserveCapacity(body.count)
        _ = addNode(.object, parent: Self.none, key: (0, 0))
        let utf8 = charset.map { ["utf-8", "utf8"].contains($0.lowercased()) } ?? true
        guard body.count < Int(Int32.max) / 2 else { throw TranscodeError("form body too large to decode") }
        try body.withUnsafeBufferPointer { (p) throws(TranscodeError) in
            var start = 0
            while start <= p.count {
                var end = start
                while end < p.count && p[end] != UInt8(ascii: "&") { end += 1 }
                if end > start { try field(p, start, end, charset: utf8 ? nil : charset, maxDepth: maxDepth) }
                start = end + 1
            }
        }
    }

    // MARK: decoding one field

    mutating func field(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, charset: String?, maxDepth: Int) throws(TranscodeError) {
        var eq = start
        while eq < end && p[eq] != UInt8(ascii: "=") { eq += 1 }
        let key = try decoded(p, start, eq, charset: charset, field: start)
        var value: (Int32, Int32)? = nil
        if eq < end { value = try decoded(p, eq + 1, end, charset: charset, field: eq + 1) }
        splitKey(key)
        guard segments.count <= maxDepth else {
            throw TranscodeError("form field starting at byte \(start) nests \(segments.count) levels deep, deeper than the limit of \(maxDepth) (limits.max_json_depth)")
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
            text.append(contentsOf: UnsafeBufferPointer(rebasing: p[from..<to]))
            i = to
        }
        while i < to {
            let c = p[i]
            if c == UInt8(ascii: "+") {
                text.append(0x20)
            } else if c == UInt8(ascii: "%") {
                guard i + 2 < to, let hi = Hex.value(p[i + 1]), let lo = Hex.value(p[i + 2]) else {
                    throw TranscodeError("invalid percent-escape at byte \(i)")
                }
                text.append(hi << 4 | lo)
                i += 2
            } else {
                text.append(c)
            }
            i += 1
        }
        if let charset {
            let raw = Array(text[begin...])
            text.removeLast(text.count - begin)
            do throws(TranscodeError) {
                text.append(contentsOf: try TextDecoding.utf8(raw, charset: charset))
            } catch {
                throw TranscodeError("\(error.description) of the field starting at byte \(field)")
            }
        } else if let bad = text.withUnsafeBufferPointer({ UTF8Validation.firstInvalidOffset(UnsafeBufferPointer(rebasing: $0[begin...])) }) {
            throw TranscodeError("invalid UTF-8 at byte \(bad) of the field starting at byte \(field)")
        }
        return (Int32(begin), Int32(text.count))
    }

    /// `a[b][]` → a, b, (empty); a key without well-formed brackets is taken whole.
    mutating func splitKey(_ key: (Int32, Int32)) {
        segments.removeAll(keepingCapacity: true)
        let lo = Int(key.0), hi = Int(key.1)
        var open = lo
        while open < hi && text[open] != UInt8(ascii: "[") { open += 1 }
        guard open < hi, open != lo, text[hi - 1] == UInt8(ascii: "]") else {
            segments.append(key)
            return
        }
        segments.append((key.0, Int32(open)))
        var at = open
        while at < hi && text[at] == UInt8(ascii: "[") {
            var close = at + 1
            while close < hi && text[close] != UInt8(ascii: "]") { close += 1 }
            guard close < hi else { segments.removeAll(keepingCapacity: true); segments.append(key); return }
            segments.append((Int32(at + 1), Int32(close)))
            at = close + 1
        }
        if at != hi { segments.removeAll(keepingCapacity: true); segments.append(key) }
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

    func hash(_ p: Int32, _ key: (Int32, Int32)) -> UInt32 {
        var h = seed
        h.combine(p)
        text.withUnsafeBytes { h.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[Int(key.0)..<Int(key.1)])) }
        return UInt32(truncatingIfNeeded: h.finalize())
    }

    func sameKey(_ node: Int32, _ key: (Int32, Int32)) -> Bool {
        let s = Int(keyStart[Int(node)]), e = Int(keyEnd[Int(node)])
        guard e - s == Int(key.1 - key.0) else { return false }
        return text.withUnsafeBufferPointer { t in
            memcmp(t.baseAddress! + s, t.baseAddress! + Int(key.0), e - s) == 0
        }
    }

    /// The member of object `p` named `key`, if any; else the table slot to claim. A slot
    /// holds the key's hash beside the node (node + 1; 0 is empty), so a probe touches the
    /// node's columns only on a likely match, and growing never hashes a key again.
    func find(_ p: Int32, _ key: (Int32, Int32), _ h: UInt32) -> (Int32?, Int) {
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

    func find(_ p: Int32, _ key: (Int32, Int32)) -> Int32? { find(p, key, hash(p, key)).0 }

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
        var bigger = [UInt64](repeating: 0, count: table.count * 2)
        let mask = bigger.count - 1
        for entry in table where entry != 0 {
            var slot = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
            while bigger[slot] != 0 { slot = (slot + 1) & mask }
            bigger[slot] = entry
        }
        table = bigger
    }

    func conflict(_ key: (Int32, Int32)) -> TranscodeError {
        let shown = String(decoding: text[Int(key.0)..<Int(key.1)], as: UTF8.self).prefix(200)
        return TranscodeError("form field '\(shown)' conflicts with an earlier field of another shape")
    }

    mutating func setLeaf(_ node: Int32, _ value: (Int32, Int32)?) {
        kind[Int(node)] = value == nil ? .null : .string
        a[Int(node)] = value?.0 ?? Self.none
        b[Int(node)] = value?.1 ?? Self.none
    }

    /// Whether `segments[from...]` already leads to a value under `node` (Rack's "key taken").
    func occupied(_ node: Int32, from: Int) -> Bool {
        var current = node
        for k in from..<segments.count {
            let name = segments[k]
            guard name.1 > name.0, kind[Int(current)] == .object, let next = find(current, name) else { return false }
            if k == segments.count - 1 { return true }
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
            if k == segments.count - 1 {
                let (leaf, created) = member(node, name, creating: .null)
                guard created || kind[Int(leaf)] == .null || kind[Int(leaf)] == .string else { throw conflict(keyRange) }
                setLeaf(leaf, value)
                return
            }
            if segments[k + 1].1 == segments[k + 1].0 {
                let (array, _) = member(node, name, creating: .array)
                guard kind[Int(array)] == .array else { throw conflict(keyRange) }
                if k + 2 == segments.count {
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

    // MARK: output

    /// Writes the JSON with an explicit stack (keys nest up to `maxDepth`, which may be
    /// deeper than a worker's stack allows for recursion), charging `budget` per member.
    func write(budget: OutputBudget) throws(TranscodeError) -> [UInt8] {
        var out: [UInt8] = []
        // Every node adds at most 10 bytes of punctuation to its text (escapes aside).
        out.reserveCapacity(min(budget.limit, text.count + 10 * kind.count + 64))
        // Per open container: the next child to write.
        var stack: [(container: Int32, child: Int32)] = [(0, a[0])]
        out.append(UInt8(ascii: "{"))
        while let (container, child) = stack.last {
            let isArray = kind[Int(container)] == .array
            guard child >= 0 else {
                out.append(isArray ? UInt8(ascii: "]") : UInt8(ascii: "}"))
                stack.removeLast()
                continue
            }
            if child != a[Int(container)] { out.append(UInt8(ascii: ",")) }
            stack[stack.count - 1].child = next[Int(child)]
            if !isArray {
                quote(keyStart[Int(child)], keyEnd[Int(child)], into: &out)
                out.append(UInt8(ascii: ":"))
            }
            switch kind[Int(child)] {
            case .null: out.append(contentsOf: "null".utf8)
            case .string: quote(a[Int(child)], b[Int(child)], into: &out)
            case .array:
                out.append(UInt8(ascii: "["))
                stack.append((child, a[Int(child)]))
            case .object:
                out.append(UInt8(ascii: "{"))
                stack.append((child, a[Int(child)]))
            }
            try budget.charge(out.count, "the JSON")
        }
        return out
    }

    func quote(_ s: Int32, _ e: Int32, into out: inout [UInt8]) {
        text.withUnsafeBufferPointer { t in
            JSONEscaping.appendQuoted(UnsafeBufferPointer(rebasing: t[Int(s)..<Int(e)]), to: &out)
        }
    }
}
