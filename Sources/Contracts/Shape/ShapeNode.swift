import Glibc
import Serializers

/// The JSON types a pointer has held, as bits. Integers and other numbers are apart for
/// a learned schema (`integer`), and one type for drift.
struct ShapeTypes: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = ShapeTypes(rawValue: 1)
    static let boolean = ShapeTypes(rawValue: 2)
    static let integer = ShapeTypes(rawValue: 4)
    static let fraction = ShapeTypes(rawValue: 8)
    static let string = ShapeTypes(rawValue: 16)
    static let object = ShapeTypes(rawValue: 32)
    static let array = ShapeTypes(rawValue: 64)

    static let number: ShapeTypes = [.integer, .fraction]

    /// A number is one type to an app whether or not it has a fraction.
    func covers(_ one: ShapeTypes) -> Bool {
        one.isSubset(of: .number) ? !intersection(.number).isEmpty : contains(one)
    }

    /// `number`, `string`, … : what a drift report says a pointer held.
    var names: String {
        var names: [String] = []
        if contains(.object) { names.append("object") }
        if contains(.array) { names.append("array") }
        if contains(.string) { names.append("string") }
        if !intersection(.number).isEmpty { names.append("number") }
        if contains(.boolean) { names.append("boolean") }
        if contains(.null) { names.append("null") }
        return names.joined(separator: "|")
    }
}

/// What the answers held at one pointer of an endpoint: the types, how often it occurred
/// and, as an object, which members it had how often; array elements share one node.
/// Nodes live in one array and name each other by index, member names in one byte arena:
/// a walk over an answer then touches no reference counts.
struct ShapeNode {
    enum Place: UInt8 {
        case root
        /// A member, by its name as the normalized output writes it (JSON escapes kept).
        case member
        /// Every member whose name reads as an id (`{id}`): a map keyed by ids.
        case anyID
        case element
    }

    static let none: Int32 = -1

    let place: Place
    let parent: Int32
    /// The member name's bytes in the tree's arena.
    let nameStart: Int32
    let nameCount: Int32
    /// The name's first eight bytes, for a comparison that mostly needs no more.
    let namePrefix: UInt64
    var types: ShapeTypes = []
    /// The formats every string here matched (bits of `ShapeFormats.all`).
    var formats = ShapeFormats.all
    /// Occurrences, every array element and answer counted; a member, once per object.
    var seen = 0
    /// Occurrences as an object: a member seen this often is always present.
    var objects = 0
    var strings = 0
    /// The object visit this member was last seen in.
    var visit: UInt64 = 0
    var firstMember = none
    var lastMember = none
    var nextSibling = none
    /// Where the next member is looked for first: answers repeat their member order.
    var hint = none
    var memberCount: Int32 = 0
    var anyID = none
    var element = none

    init(_ place: Place, parent: Int32, nameStart: Int32 = 0, nameCount: Int32 = 0, namePrefix: UInt64 = 0) {
        self.place = place
        self.parent = parent
        self.nameStart = nameStart
        self.nameCount = nameCount
        self.namePrefix = namePrefix
    }

    /// Up to the first eight bytes of `name`, little-endian.
    @inline(__always)
    static func prefix(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        if name.count >= 8 { return UnsafeRawPointer(name.baseAddress!).loadUnaligned(as: UInt64.self) }
        var value: UInt64 = 0
        for k in 0..<name.count { value |= UInt64(name[k]) << (UInt64(k) << 3) }
        return value
    }
}

/// A shape's nodes in memory of their own: a walk reads and writes them through one
/// pointer (`base`, which moves only when a node is added), without the uniqueness and
/// bounds checks an array's in-place writes cost on every field.
final class ShapeNodes {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<ShapeNode>
    @exclusivity(unchecked) private(set) var count = 1
    @exclusivity(unchecked) private var capacity = 8

    init() {
        base = .allocate(capacity: capacity)
        base.initialize(to: ShapeNode(.root, parent: ShapeNode.none))
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    subscript(k: Int) -> ShapeNode {
        get {
            precondition(k >= 0 && k < count)
            return base[k]
        }
        set {
            precondition(k >= 0 && k < count)
            base[k] = newValue
        }
    }

    func append(_ node: ShapeNode) -> Int {
        if count == capacity {
            let grown = UnsafeMutablePointer<ShapeNode>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: node)
        count += 1
        return count - 1
    }
}

/// One status's shape at an endpoint: its nodes (the root first) and their member names.
struct ShapeTree {
    let nodes = ShapeNodes()
    var names: [UInt8] = []
    /// Members of objects with many, by parent and name, so a wide object stays linear.
    var wide: [WideKey: Int32] = [:]

    struct WideKey: Hashable {
        let parent: Int32
        let name: [UInt8]
    }

    static let wideFrom: Int32 = 16

    /// The member of `parent` named `name` (`prefix`: `ShapeNode.prefix(name)`), if learned.
    mutating func member(of parent: Int, named name: UnsafeBufferPointer<UInt8>, prefix: UInt64) -> Int? {
        let p = nodes.base
        let count = p[parent].memberCount
        guard count > 0 else { return nil }
        // The member after the last one found, then every member from the first.
        let hint = p[parent].hint
        var k = hint == ShapeNode.none ? p[parent].firstMember : p[Int(hint)].nextSibling
        if k == ShapeNode.none { k = p[parent].firstMember }
        if matches(p, Int(k), name, prefix) {
            p[parent].hint = k
            return Int(k)
        }
        if count >= Self.wideFrom {
            guard let found = wide[WideKey(parent: Int32(parent), name: Array(name))] else { return nil }
            p[parent].hint = found
            return Int(found)
        }
        k = p[parent].firstMember
        while k != ShapeNode.none {
            if matches(p, Int(k), name, prefix) {
                p[parent].hint = k
                return Int(k)
            }
            k = p[Int(k)].nextSibling
        }
        return nil
    }

    @inline(__always)
    private func matches(_ p: UnsafeMutablePointer<ShapeNode>, _ k: Int, _ name: UnsafeBufferPointer<UInt8>, _ prefix: UInt64) -> Bool {
        guard Int(p[k].nameCount) == name.count, p[k].namePrefix == prefix else { return false }
        if name.count <= 8 { return true }
        let start = Int(p[k].nameStart)
        return names.withUnsafeBufferPointer { memcmp($0.baseAddress! + start + 8, name.baseAddress! + 8, name.count - 8) == 0 }
    }

    mutating func add(member name: UnsafeBufferPointer<UInt8>, to parent: Int) -> Int {
        let k = Int32(nodes.append(ShapeNode(.member, parent: Int32(parent), nameStart: Int32(names.count), nameCount: Int32(name.count),
                                             namePrefix: ShapeNode.prefix(name))))
        names.append(contentsOf: name)
        if nodes[parent].lastMember == ShapeNode.none {
            nodes[parent].firstMember = k
        } else {
            nodes[Int(nodes[parent].lastMember)].nextSibling = k
        }
        nodes[parent].lastMember = k
        nodes[parent].memberCount += 1
        nodes[parent].hint = k
        if nodes[parent].memberCount == Self.wideFrom {
            for member in members(of: parent) { wide[WideKey(parent: Int32(parent), name: self.name(of: member))] = Int32(member) }
        } else if nodes[parent].memberCount > Self.wideFrom {
            wide[WideKey(parent: Int32(parent), name: Array(name))] = k
        }
        return Int(k)
    }

    mutating func add(_ place: ShapeNode.Place, to parent: Int) -> Int {
        let k = nodes.append(ShapeNode(place, parent: Int32(parent)))
        if place == .anyID { nodes[parent].anyID = Int32(k) } else { nodes[parent].element = Int32(k) }
        return k
    }

    func members(of parent: Int) -> [Int] {
        var out: [Int] = []
        var k = nodes[parent].firstMember
        while k != ShapeNode.none {
            out.append(Int(k))
            k = nodes[Int(k)].nextSibling
        }
        return out
    }

    func name(of k: Int) -> [UInt8] {
        Array(names[Int(nodes[k].nameStart)..<Int(nodes[k].nameStart + nodes[k].nameCount)])
    }

    /// The JSON pointer of a node; `*` stands for any element, `{id}` for any id member.
    func pointer(_ k: Int) -> String {
        var steps: [String] = []
        var at = k
        while at > 0 {
            let node = nodes[at]
            switch node.place {
            case .root: break
            case .member: steps.append(Self.unescaped(name(of: at)).replacingOccurrences("~", "~0").replacingOccurrences("/", "~1"))
            case .anyID: steps.append("{id}")
            case .element: steps.append("*")
            }
            at = Int(node.parent)
        }
        return steps.reversed().map { "/" + $0 }.joined()
    }

    /// A member name as written in the output, its escapes read.
    static func unescaped(_ raw: [UInt8]) -> String {
        guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw, as: UTF8.self) }
        if case .string(let text)? = try? JSONValue.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]) { return text }
        return String(decoding: raw, as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}

/// The formats a learned schema may name, as bits; a string is tried only against those a
/// cheap look at it leaves, and only while every earlier string matched.
enum ShapeFormats {
    static let order: [SchemaFormat] = [.dateTime, .date, .time, .uuid, .ipv4, .ipv6, .email, .uri]
    static let all: UInt8 = 0xFF

    /// The formats `bytes` (a string's content without escapes) has, among `candidates`.
    static func matched(_ bytes: UnsafeBufferPointer<UInt8>, among candidates: UInt8) -> UInt8 {
        let n = bytes.count
        guard n > 0 else { return 0 }
        var colon = false, at = false, dash = false
        for c in bytes {
            if c == UInt8(ascii: ":") { colon = true } else if c == UInt8(ascii: "@") { at = true } else if c == UInt8(ascii: "-") { dash = true }
        }
        var possible: UInt8 = 0
        if n >= 20, dash, colon { possible |= 1 << 0 }
        if n == 10, dash { possible |= 1 << 1 }
        if n >= 9, colon, n < 40 { possible |= 1 << 2 }
        if n == 36, dash { possible |= 1 << 3 }
        if n >= 7, n <= 15, bytes[0] >= 0x30, bytes[0] <= 0x39 { possible |= 1 << 4 }
        if colon, n <= 45 { possible |= 1 << 5 }
        if at { possible |= 1 << 6 }
        if colon { possible |= 1 << 7 }
        possible &= candidates
        guard possible != 0 else { return 0 }
        let array = Array(bytes)
        var result: UInt8 = 0
        for (k, format) in order.enumerated() where possible & (1 << k) != 0 {
            if format.accepts(array) { result |= 1 << k }
        }
        return result
    }

    /// The first format every string matched, in `order`.
    static func name(_ bits: UInt8) -> String? {
        for (k, format) in order.enumerated() where bits & (1 << k) != 0 { return format.rawValue }
        return nil
    }
}
