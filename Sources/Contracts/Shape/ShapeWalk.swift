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

/// One pass over an answer's normalized JSON that learns its shape into a tree of
/// `ShapeNode`s and, when `report` holds, lists how it differs from what was learned.
/// No value tree is built: the bytes are read once, member names compared in place.
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

    init(_ bytes: UnsafeBufferPointer<UInt8>, budget: Int, visit: UInt64) {
        b = bytes
        self.budget = budget
        self.visit = visit
    }

    /// Learns the whole value into `root`.
    mutating func run(_ root: ShapeNode, report: Bool) {
        value(root, report: report, depth: 0)
        space()
        if i != b.count { broken = true }
        if broken { changes.removeAll() }
    }

    private mutating func space() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
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

    private mutating func value(_ node: ShapeNode, report: Bool, depth: Int) {
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
        if !node.types.covers(type) {
            if report && node.seen > 0 {
                changes.append(ShapeChange(kind: type == .null ? .null : .type, pointer: node.pointer, was: node.types.names, now: type.names))
                // What follows from this change is not another one.
                inner = false
            }
        }
        node.types.insert(type)
        node.seen &+= 1
        switch type {
        case .object: object(node, report: inner, depth: depth)
        case .array: array(node, report: inner, depth: depth)
        case .string:
            node.strings &+= 1
            if node.formats != 0 {
                node.formats = escaped ? 0 : ShapeFormats.matched(UnsafeBufferPointer(rebasing: b[start..<end]), among: node.formats)
            }
        default: break
        }
    }

    private mutating func object(_ node: ShapeNode, report: Bool, depth: Int) {
        i += 1
        node.objects &+= 1
        visit &+= 1
        let mine = visit
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
                space()
                let name = UnsafeBufferPointer(rebasing: b[start..<end])
                var child = node.member(named: name)
                var fresh = false
                if child == nil {
                    if ShapeEndpoint.isID(name) {
                        child = node.anyID
                        if child == nil, let made = make({ ShapeNode(.anyID, parent: node) }) {
                            node.anyID = made
                            child = made
                            fresh = true
                        }
                    } else if name.count <= Self.maxNameBytes, budget > 0 {
                        child = make { node.add(member: Array(name)) }
                        fresh = true
                    }
                }
                if let child {
                    if fresh && report && node.objects > 1 {
                        changes.append(ShapeChange(kind: .newMember, pointer: child.pointer, was: "absent", now: peek()?.names ?? "?"))
                    }
                    // A name repeated in one object is present once: `seen` counts objects.
                    let repeated = child.visit == mine
                    child.visit = mine
                    value(child, report: report && !fresh, depth: depth + 1)
                    if repeated { child.seen &-= 1 }
                } else {
                    unlearned += 1
                    skip()
                }
                guard !broken else { return }
                space()
                guard i < b.count else { return fail() }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                guard b[i] == UInt8(ascii: "}") else { return fail() }
                i += 1
                break
            }
        }
        guard report, node.objects > 1 else { return }
        for member in node.members where member.visit != mine && member.seen == node.objects - 1 {
            changes.append(ShapeChange(kind: .missingMember, pointer: member.pointer, was: member.types.names, now: "absent"))
        }
    }

    private mutating func array(_ node: ShapeNode, report: Bool, depth: Int) {
        i += 1
        space()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return }
        while true {
            if node.element == nil { node.element = make { ShapeNode(.element, parent: node) } }
            if let element = node.element {
                value(element, report: report, depth: depth + 1)
            } else {
                unlearned += 1
                skip()
            }
            guard !broken else { return }
            space()
            guard i < b.count else { return fail() }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "]") else { return fail() }
            i += 1
            return
        }
    }

    private mutating func make(_ node: () -> ShapeNode) -> ShapeNode? {
        guard budget > 0 else { return nil }
        budget -= 1
        added += 1
        return node()
    }

    /// A string at `i`: its content's bounds and whether it has escapes; `i` after it.
    private mutating func string() -> (Int, Int, Bool)? {
        i += 1
        let start = i
        var escaped = false
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return (start, i - 1, escaped)
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                i += 2
                continue
            }
            if c < 0x20 { return nil }
            i += 1
        }
        return nil
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
