import Glibc

/// One change in an endpoint's shape, as one answer showed it (DESIGN §10).
public struct ShapeChange: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A member never seen before.
        case newMember = "new_member"
        /// A member every earlier answer had.
        case missingMember = "missing_member"
        /// A type never seen at the pointer: a number as a string, an array become an object.
        case type
        /// Null where there never was one.
        case null
        /// The serializer refused an answer of a kind it always read (an HTML page for JSON).
        case refused
    }

    public let kind: Kind
    public let pointer: String
    public let was: String
    public let now: String
}

/// One pass over an answer's normalized JSON that learns its shape into a `ShapeTree`
/// and, when `report` holds, lists how it differs from what was learned. No value tree is
/// built: the bytes are read once, member names compared in place.
struct ShapeWalk {
    static let maxDepth = 1_000
    /// Longer member names are not learned (counted).
    static let maxNameBytes = 256

    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Nodes this walk may still add.
    var budget: Int
    var added = 0
    var unlearned = 0
    var visit: UInt64
    var changes: [ShapeChange] = []
    /// The bytes were not one JSON value (never for a serializer's output).
    var broken = false
    /// With `recordsStrings`, the node of each string value in document order (the
    /// fingerprint's list of strings, node by node).
    var recordsStrings = false
    var stringNodes: [Int32] = []
    /// The tree's nodes: set again after every node added (which may move them).
    private var p: UnsafeMutablePointer<ShapeNode>

    init(_ bytes: UnsafeBufferPointer<UInt8>, nodes: ShapeNodes, budget: Int, visit: UInt64) {
        b = bytes
        p = nodes.base
        self.budget = budget
        self.visit = visit
    }

    /// Learns the whole value into `tree`.
    mutating func run(_ tree: inout ShapeTree, report: Bool) {
        guard !b.isEmpty else { return fail() }
        p = tree.nodes.base
        value(0, &tree, report: report, depth: 0)
        space()
        if i != b.count { broken = true }
        if broken { changes.removeAll() }
    }

    @inline(__always)
    private mutating func space() {
        while i < b.count, b[i] <= 0x20, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    private mutating func fail() {
        broken = true
        i = b.count
    }

    /// The type of the value at `i` by its first byte.
    private func peek() -> ShapeTypes? {
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), 0x30...0x39: return .integer
        default: return nil
        }
    }

    private mutating func value(_ k: Int, _ t: inout ShapeTree, report: Bool, depth: Int) {
        space()
        guard !broken, var type = peek() else { return fail() }
        if depth >= Self.maxDepth { return skip() }
        var start = 0, end = 0, escaped = false
        switch type {
        case .string:
            guard let range = string() else { return fail() }
            (start, end, escaped) = range
        case .integer:
            if number() { type = .fraction }
        case .boolean:
            guard literal(b[i] == UInt8(ascii: "t") ? "true" : "false") else { return fail() }
        case .null:
            guard literal("null") else { return fail() }
        default:
            break
        }
        var inner = report
        if !p[k].types.contains(type) {
            if report && p[k].seen > 0 && !p[k].types.covers(type) {
                changes.append(ShapeChange(kind: type == .null ? .null : .type, pointer: t.pointer(k), was: p[k].types.names, now: type.names))
                // What follows from this change is not another one.
                inner = false
            }
            p[k].types.insert(type)
        }
        p[k].seen &+= 1
        switch type {
        case .object: object(k, &t, report: inner, depth: depth)
        case .array: array(k, &t, report: inner, depth: depth)
        case .string:
            if recordsStrings { stringNodes.append(Int32(k)) }
            p[k].strings &+= 1
            if p[k].formats != 0 {
                p[k].formats = escaped ? 0 : ShapeFormats.matched(UnsafeBufferPointer(rebasing: b[start..<end]), among: p[k].formats)
            }
        default: break
        }
    }

    private mutating func object(_ k: Int, _ t: inout ShapeTree, report: Bool, depth: Int) {
        i += 1
        p[k].objects &+= 1
        visit &+= 1
        let mine = visit
        // Learned members seen in this object, each once.
        var present: Int32 = 0
        space()
        if i < b.count, b[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                space()
                guard i < b.count, b[i] == UInt8(ascii: "\""), let (start, end, _) = string() else { return fail() }
                space()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return fail() }
                i += 1
                let name = UnsafeBufferPointer(rebasing: b[start..<end])
                // The name's first eight bytes, read at once where the body has them.
                let count = end - start
                let prefix = start + 8 <= b.count
                    ? UnsafeRawPointer(b.baseAddress!).loadUnaligned(fromByteOffset: start, as: UInt64.self) & (count >= 8 ? ~0 : (1 << (UInt64(count) << 3)) - 1)
                    : ShapeNode.prefix(name)
                var child = t.member(of: k, named: name, prefix: prefix)
                var fresh = false
                if child == nil {
                    if ShapeEndpoint.isID(name) {
                        let any = p[k].anyID
                        if any != ShapeNode.none {
                            child = Int(any)
                        } else if make() {
                            child = t.add(.anyID, to: k)
                            p = t.nodes.base
                            fresh = true
                        }
                    } else if name.count <= Self.maxNameBytes, make() {
                        child = t.add(member: name, to: k)
                        p = t.nodes.base
                        fresh = true
                    }
                }
                if let child {
                    if fresh && report && p[k].objects > 1 {
                        space()
                        changes.append(ShapeChange(kind: .newMember, pointer: t.pointer(child), was: "absent", now: peek()?.names ?? "?"))
                    }
                    // A name repeated in one object is present once: `seen` counts objects.
                    let repeated = p[child].visit == mine
                    if !repeated && p[child].place == .member { present += 1 }
                    p[child].visit = mine
                    value(child, &t, report: report && !fresh, depth: depth + 1)
                    if repeated { p[child].seen &-= 1 }
                } else {
                    unlearned += 1
                    skip()
                }
                guard next(closing: UInt8(ascii: "}")) else { break }
            }
            guard !broken else { return }
        }
        // Every learned member present: none can be missing.
        guard report, p[k].objects > 1, present < p[k].memberCount else { return }
        let objects = p[k].objects
        var m = Int(p[k].firstMember)
        while m != Int(ShapeNode.none) {
            if p[m].visit != mine && p[m].seen == objects - 1 {
                changes.append(ShapeChange(kind: .missingMember, pointer: t.pointer(m), was: p[m].types.names, now: "absent"))
            }
            m = Int(p[m].nextSibling)
        }
    }

    private mutating func array(_ k: Int, _ t: inout ShapeTree, report: Bool, depth: Int) {
        i += 1
        space()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return }
        while true {
            var element = p[k].element
            if element == ShapeNode.none, make() {
                element = Int32(t.add(.element, to: k))
                p = t.nodes.base
            }
            if element != ShapeNode.none {
                value(Int(element), &t, report: report, depth: depth + 1)
            } else {
                unlearned += 1
                skip()
            }
            guard next(closing: UInt8(ascii: "]")) else { return }
        }
    }

    /// After a member or element: true at a comma (another follows), false past the
    /// closing bracket or when the bytes are broken.
    private mutating func next(closing: UInt8) -> Bool {
        guard !broken else { return false }
        space()
        guard i < b.count else {
            fail()
            return false
        }
        if b[i] == UInt8(ascii: ",") {
            i += 1
            return true
        }
        if b[i] != closing { fail() }
        i += 1
        return false
    }

    /// Takes one node from the budget.
    private mutating func make() -> Bool {
        guard budget > 0 else { return false }
        budget -= 1
        added += 1
        return true
    }

    /// A string at `i`: its content's bounds and whether it has escapes; `i` after it.
    /// Eight bytes at a time while eight remain (a quote or backslash among them found by
    /// bit arithmetic), then byte by byte; a quote after a backslash is the string's own.
    private mutating func string() -> (Int, Int, Bool)? {
        i += 1
        let start = i, n = b.count
        let raw = UnsafeRawPointer(b.baseAddress!)
        var escaped = false
        while true {
            while i + 8 <= n {
                let mask = Self.quotesAndBackslashes(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if mask != 0 {
                    // The lowest flagged byte is exact (the borrow only flags bytes above it).
                    i += mask.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < n else { return nil }
            let c = b[i]
            if c == 0x22 {
                i += 1
                return (start, i - 1, escaped)
            }
            if c == 0x5C {
                escaped = true
                i += 2
            } else {
                i += 1
            }
        }
    }

    /// The high bit of each byte of `word` that is `"` or `\\` (the classic zero-byte
    /// test on each xor; bytes above the first may be flagged falsely, never below).
    @inline(__always)
    static func quotesAndBackslashes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ 0x2222_2222_2222_2222, slash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        return ((quote &- ones) & ~quote | (slash &- ones) & ~slash) & highs
    }

    /// A number at `i`; true when it has a fraction or exponent.
    private mutating func number() -> Bool {
        var fraction = false, digits = false
        while i < b.count {
            let c = b[i]
            if c >= 0x30 && c <= 0x39 {
                digits = true
                i += 1
            } else if c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
                i += 1
            } else if c == UInt8(ascii: ".") || c | 0x20 == UInt8(ascii: "e") {
                fraction = true
                i += 1
            } else {
                break
            }
        }
        if !digits { fail() }
        return fraction
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard b.count - i >= n, memcmp(b.baseAddress! + i, word.utf8Start, n) == 0 else { return false }
        i += n
        return true
    }

    /// Past one value without learning it (too deep, or beyond the limits).
    private mutating func skip() {
        var depth = 0
        repeat {
            space()
            guard i < b.count else { return fail() }
            switch b[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                i += 1
                if depth < 0 { return fail() }
            case UInt8(ascii: "\""):
                guard string() != nil else { return fail() }
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                i += 1
            default:
                let start = i
                while i < b.count, !"{}[],: \n\r\t\"".utf8.contains(b[i]) { i += 1 }
                if i == start { return fail() }
            }
        } while depth > 0
    }
}
