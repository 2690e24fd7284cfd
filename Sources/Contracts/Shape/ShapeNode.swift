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
final class ShapeNode {
    enum Place {
        case root
        /// A member, by its name as the normalized output writes it (JSON escapes kept).
        case member([UInt8])
        /// Every member whose name reads as an id (`{id}`): a map keyed by ids.
        case anyID
        case element
    }

    let place: Place
    unowned(unsafe) let parent: ShapeNode?
    var types: ShapeTypes = []
    /// Occurrences, every array element and answer counted.
    var seen = 0
    /// Occurrences as an object: a member seen this often is always present.
    var objects = 0
    var members: [ShapeNode] = []
    /// Members by name once there are many, so a wide object stays linear.
    var index: [[UInt8]: Int]?
    /// Where the next member is looked for first: answers repeat their member order.
    var next = 0
    var anyID: ShapeNode?
    var element: ShapeNode?
    /// The formats every string here matched (bits of `ShapeFormats.all`).
    var formats = ShapeFormats.all
    var strings = 0
    /// The object visit this member was last seen in.
    var visit: UInt64 = 0

    init(_ place: Place, parent: ShapeNode?) {
        self.place = place
        self.parent = parent
    }

    static let indexFrom = 16

    func member(named name: UnsafeBufferPointer<UInt8>) -> ShapeNode? {
        if let index { return index[Array(name)].map { members[$0] } }
        let count = members.count
        guard count > 0 else { return nil }
        var k = next < count ? next : 0
        for _ in 0..<count {
            let node = members[k]
            if case .member(let stored) = node.place, stored.count == name.count,
               (name.isEmpty || stored.withUnsafeBufferPointer({ memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 })) {
                next = k + 1
                return node
            }
            k = k + 1 == count ? 0 : k + 1
        }
        return nil
    }

    func add(member name: [UInt8]) -> ShapeNode {
        let node = ShapeNode(.member(name), parent: self)
        members.append(node)
        if index != nil {
            index?[name] = members.count - 1
        } else if members.count >= Self.indexFrom {
            var built: [[UInt8]: Int] = [:]
            for (k, member) in members.enumerated() { if case .member(let n) = member.place { built[n] = k } }
            index = built
        }
        next = members.count
        return node
    }

    /// The JSON pointer of this node; `*` stands for any element, `{id}` for any id member.
    var pointer: String {
        var steps: [String] = []
        var node: ShapeNode? = self
        while let current = node, let parent = current.parent {
            switch current.place {
            case .root: break
            case .member(let raw): steps.append(Self.unescaped(raw).replacingOccurrences("~", "~0").replacingOccurrences("/", "~1"))
            case .anyID: steps.append("{id}")
            case .element: steps.append("*")
            }
            node = parent
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
