import CSchema
import Glibc
import Serializers

/// A document's schemas lowered for the one-pass walk over normalized bytes
/// (schema_walk.h): a node per schema object, member names in open-addressed tables.
/// Nodes with a keyword the walk does not run give up there, and the full validator
/// decides that answer.
final class SchemaProgram: @unchecked Sendable {
    /// The tables, allocated once so that the normalizer can be handed `program` itself.
    private let nodes: UnsafeMutableBufferPointer<sw_node>
    private let props: UnsafeMutableBufferPointer<sw_prop>
    private let slots: UnsafeMutableBufferPointer<Int32>
    private let names: UnsafeMutableBufferPointer<UInt8>
    private let branches: UnsafeMutableBufferPointer<Int32>
    private let frames: UnsafeMutableBufferPointer<sw_frame>
    private let program: UnsafeMutablePointer<sw_program>
    /// The schema behind each walk node, for the values the walk defers.
    let sources: [SchemaNode?]
    private let index: [ObjectIdentifier: Int32]

    /// More schema objects than this, and answers go to the full validator alone.
    static let maxNodes = 100_000

    init?(_ schemas: [SchemaNode]) {
        guard schemas.count <= Self.maxNodes else { return nil }
        var index: [ObjectIdentifier: Int32] = [:]
        for (i, node) in schemas.enumerated() { index[ObjectIdentifier(node)] = Int32(i + 2) }
        self.index = index
        var lowering = Lowering(index: index)
        for node in schemas { lowering.lower(node) }
        lowering.finish()
        nodes = Self.copy(lowering.nodes)
        let nodesBase = nodes.baseAddress!
        // Each member's check, now that every node's `quick` kinds are known.
        props = Self.copy(lowering.props.map { prop in
            var prop = prop
            if prop.child.node >= 0 { prop.child = serializerd_schema_check(nodesBase, prop.child.node) }
            return prop
        }, alignment: 64)
        let propsBase = props.baseAddress!
        let childOffset = MemoryLayout<sw_prop>.offset(of: \.child)!
        for (i, successor) in lowering.successors.enumerated() {
            props[i].next = UnsafeRawPointer(propsBase + successor).advanced(by: childOffset).assumingMemoryBound(to: sw_check.self)
        }
        slots = Self.copy(lowering.slots)
        // Names are compared 32 bytes at a time.
        names = Self.copy(lowering.names + [UInt8](repeating: 0, count: 32))
        branches = Self.copy(lowering.branches)
        frames = Self.copy(lowering.nodes.enumerated().flatMap { id, node in
            [false, true].map { array in
                let (min, max) = array ? (node.min_items, node.max_items) : (node.min_props, node.max_props)
                // A node whose names need escapes never guesses a member by its bytes.
                let start = node.props < 0 ? Int(node.other) : node.flags & UInt32(SW_ESCAPED_NAMES) != 0 ? 0 : Int(node.props) - 1
                var frame = sw_frame()
                frame.first = UnsafeRawPointer(propsBase + start).advanced(by: childOffset)
                    .assumingMemoryBound(to: sw_check.self)
                frame.required = array ? 0 : node.required
                frame.node = Int32(id)
                frame.array = array ? 1 : 0
                (frame.min, frame.span) = min <= max ? (min, max - min) : (.max, 0)
                frame.items = serializerd_schema_check(nodesBase, node.items)
                return frame
            }
        }, alignment: 64)
        program = .allocate(capacity: 1)
        program.initialize(to: sw_program(nodes: nodes.baseAddress, props: propsBase, slots: slots.baseAddress,
                                          names: names.baseAddress, branches: branches.baseAddress,
                                          frames: frames.baseAddress))
        sources = [nil, nil] + schemas
    }

    deinit {
        nodes.deallocate()
        UnsafeMutableRawPointer(props.baseAddress!).deallocate()
        slots.deallocate()
        names.deallocate()
        branches.deallocate()
        UnsafeMutableRawPointer(frames.baseAddress!).deallocate()
        program.deallocate()
    }

    /// `items` in memory of their own, aligned to `alignment` bytes (a member entry or a
    /// frame is one cache line when its array starts on one).
    private static func copy<T>(_ items: [T], alignment: Int = MemoryLayout<T>.alignment) -> UnsafeMutableBufferPointer<T> {
        let capacity = max(items.count, 1)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<T>.stride, alignment: alignment)
        let buffer = UnsafeMutableBufferPointer(start: raw.bindMemory(to: T.self, capacity: capacity), count: capacity)
        _ = buffer.initialize(from: items)
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<items.count])
    }

    /// The walk node that checks `node`: pure `$ref`s followed to their target.
    func node(for schema: SchemaNode) -> Int32 { Lowering.resolve(schema, index) }

    /// The program from `root` for the JSON normalizer to check as it writes (DESIGN §10).
    func outputContract(root: Int32) -> OutputContract {
        OutputContract(program: UnsafeRawPointer(program), root: root, owner: self)
    }

    /// Whether `bytes` meet the schema at `root`: true or false when decided, nil when
    /// only the full validator can tell.
    func accepts(_ bytes: UnsafeRawBufferPointer, root: Int32) -> Bool? {
        var deferred = sw_deferrals(items: nil, count: 0, capacity: 0)
        defer { free(deferred.items) }
        let walked = serializerd_schema_walk(program, root, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &deferred)
        guard walked == 1 else { return nil }
        return leavesAccept(bytes, (0..<deferred.count).lazy.map { k in
            let leaf = deferred.items[k]
            return (leaf.node, leaf.start, Int(leaf.length))
        })
    }

    /// The same for bytes the normalizer vouched for from `root`: nil when the vouch is
    /// another program's or root's.
    func accepts(_ bytes: UnsafeRawBufferPointer, vouch: ContractVouch, root: Int32) -> Bool? {
        guard vouch.program == UnsafeRawPointer(program), vouch.root == root else { return nil }
        return leavesAccept(bytes, vouch.deferred.lazy.map { ($0.node, $0.start, $0.length) })
    }

    /// The deferred values' own checks (pattern, format, enum, bounds), each on its value alone.
    private func leavesAccept(_ bytes: UnsafeRawBufferPointer, _ leaves: some Sequence<(Int32, Int, Int)>) -> Bool? {
        for (node, start, length) in leaves {
            guard let schema = sources[Int(node)], start + length <= bytes.count else { return nil }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
            guard let value = try? JSONValue.parse(Array(slice), options: JSONReadOptions(allowFragments: true)) else { return nil }
            var run = ValidationRun(limit: 0)
            var evaluated = Evaluated()
            if !run.check(schema, value, record: false, evaluated: &evaluated) { return false }
        }
        return true
    }
}

/// Schema nodes into walk nodes.
private struct Lowering {
    let index: [ObjectIdentifier: Int32]
    var nodes: [sw_node]
    /// Entry 0 names nothing (sw_frame).
    var props: [sw_prop] = [Self.unnamed]
    /// Per entry, the entry first guessed after it (sw_prop's `next`, a pointer once the
    /// entries have their place).
    var successors: [Int] = [0]
    var slots: [Int32] = []
    var names: [UInt8] = []
    var branches: [Int32] = []

    init(index: [ObjectIdentifier: Int32]) {
        self.index = index
        var any = Self.blank
        any.types = UInt32(SW_ANY_TYPE)
        var giveUp = Self.blank
        giveUp.flags = UInt32(SW_GIVE_UP)
        nodes = [any, giveUp] + Array(repeating: giveUp, count: index.count)
    }

    static let blank = sw_node(types: 0, flags: 0, required: 0, props: -1, slots: -1, other: 0, mask: 0, additional: Int32(SW_NODE_ANY),
                               items: Int32(SW_NODE_ANY), dispatch: -1, min_length: 0, max_length: .max, min_items: 0,
                               max_items: .max, min_props: 0, max_props: .max, quick: 0)

    /// Each node's `quick` kinds, and the entry of its undeclared members, once every node
    /// is lowered.
    mutating func finish() {
        for i in nodes.indices where nodes[i].types & UInt32(SW_OBJECT) != 0 {
            var other = Self.unnamed
            other.child.node = nodes[i].additional
            nodes[i].other = Int32(props.count)
            add(other, next: props.count)
        }
        for i in nodes.indices {
            let node = nodes[i]
            var quick = node.types
            if node.dispatch >= 0 || node.flags & UInt32(SW_GIVE_UP) != 0 { quick = 0 }
            if node.flags & UInt32(SW_DEFER_SCALAR) != 0 { quick = 0 }
            if node.flags & UInt32(SW_DEFER_STRING) != 0 || node.min_length > 0 { quick &= ~UInt32(SW_STRING) }
            if node.flags & UInt32(SW_DEFER_NUMBER) != 0 { quick &= ~UInt32(SW_NUMBER | SW_INTEGER) }
            nodes[i].quick = quick
        }
    }

    /// A node that is only a `$ref` (or an `allOf` of one) checks what its target does.
    static func resolve(_ start: SchemaNode, _ index: [ObjectIdentifier: Int32]) -> Int32 {
        guard let node = target(start, index.count) else { return Int32(SW_NODE_GIVE_UP) }
        if let always = node.always { return Int32(always ? SW_NODE_ANY : SW_NODE_GIVE_UP) }
        return index[ObjectIdentifier(node)] ?? Int32(SW_NODE_GIVE_UP)
    }

    /// The node a chain of pure `$ref`s ends at (nil: a broken or endless chain).
    static func target(_ start: SchemaNode, _ limit: Int) -> SchemaNode? {
        var node = start
        for _ in 0...limit {
            guard node.always == nil else { return node }
            let checks = operative(node)
            guard checks.count == 1 else { return node }
            switch checks[0] {
            case .ref(let link): guard let next = link.node else { return nil }; node = next
            case .allOf(let one) where one.count == 1: node = one[0]
            default: return node
            }
        }
        return nil
    }

    /// The node's keywords but `nullable`, which only ever widens its own `type`.
    static func operative(_ node: SchemaNode) -> [Check] {
        node.checks.filter { if case .nullable = $0 { false } else { true } }
    }

    /// The branch-table kinds a `type` allows (null, boolean, object, array, number, string).
    static func kinds(_ types: [JSONType]) -> Set<Int> {
        Set(types.map { type -> Int in
            switch type {
            case .null: 0
            case .boolean: 1
            case .object: 2
            case .array: 3
            case .number, .integer: 4
            case .string: 5
            }
        })
    }

    /// An `anyOf`/`oneOf` as a branch table, when each kind of value can meet at most one
    /// branch (every branch has a `type`, and no two share a kind): then the branch for
    /// the value's kind decides, for `oneOf` as for `anyOf`. Nil when they overlap.
    mutating func dispatch(_ list: [SchemaNode]) -> Int32? {
        var table = [Int32](repeating: -1, count: Int(SW_KINDS))
        for branch in list {
            guard let node = Self.target(branch, index.count) else { return nil }
            if node.always == false { continue }
            guard node.always == nil,
                  case .type(let types)? = Self.operative(node).first(where: { if case .type = $0 { true } else { false } }),
                  let at = index[ObjectIdentifier(node)] else { return nil }
            for kind in Self.kinds(types) {
                guard table[kind] < 0 else { return nil }
                table[kind] = at
            }
        }
        let first = Int32(branches.count)
        branches += table
        return first
    }

    static func clamp(_ n: Int) -> UInt32 { UInt32(clamping: n) }

    mutating func lower(_ schema: SchemaNode) {
        guard let at = index[ObjectIdentifier(schema)], schema.always == nil, !schema.needsAnnotations else { return }
        var node = Self.blank
        node.types = UInt32(SW_ANY_TYPE)
        // The node is one `anyOf`/`oneOf`: a branch table when the branches keep apart.
        let operative = Self.operative(schema)
        if operative.count == 1 {
            switch operative[0] {
            case .anyOf(let list), .oneOf(let list):
                guard let table = dispatch(list) else { return }
                node.dispatch = table
                nodes[Int(at)] = node
                return
            default:
                break
            }
        }
        var members: [(name: String, child: Int32)] = []
        var required: [String] = []
        for check in schema.checks {
            switch check {
            case .type(let types):
                node.types = 0
                for type in types {
                    switch type {
                    case .null: node.types |= UInt32(SW_NULL)
                    case .boolean: node.types |= UInt32(SW_BOOLEAN)
                    case .object: node.types |= UInt32(SW_OBJECT)
                    case .array: node.types |= UInt32(SW_ARRAY)
                    case .number: node.types |= UInt32(SW_NUMBER | SW_INTEGER)
                    case .integer: node.types |= UInt32(SW_INTEGER)
                    case .string: node.types |= UInt32(SW_STRING)
                    }
                }
            case .nullable: break
            case .enumeration, .constant: node.flags |= UInt32(SW_DEFER_SCALAR)
            case .pattern, .format: node.flags |= UInt32(SW_DEFER_STRING)
            case .minimum, .maximum, .exclusiveMinimum, .exclusiveMaximum, .multipleOf: node.flags |= UInt32(SW_DEFER_NUMBER)
            case .minLength(let n): node.min_length = Self.clamp(n)
            case .maxLength(let n): node.max_length = Self.clamp(n)
            case .minItems(let n): node.min_items = Self.clamp(n)
            case .maxItems(let n): node.max_items = Self.clamp(n)
            case .minProperties(let n): node.min_props = Self.clamp(n)
            case .maxProperties(let n): node.max_props = Self.clamp(n)
            case .properties(let schemas, let order):
                // (One `properties` per schema object.)
                members = order.map { ($0, Self.resolve(schemas[$0]!, index)) }
            case .required(let list): required = list
            case .additionalProperties(let child): node.additional = Self.resolve(child, index)
            case .items(let child): node.items = Self.resolve(child, index)
            default:
                return   // stays a node the walk gives up at
            }
        }
        let requiredSet = Set(required)
        if node.min_props > 0 || node.max_props != .max { node.flags |= UInt32(SW_COUNTED) }
        guard requiredSet.count < Int(SW_UNREQUIRED) else { return }
        var entries: [(name: String, child: Int32, bit: Int32)] = members.map { ($0.name, $0.child, -1) }
        for (bit, name) in requiredSet.sorted().enumerated() {
            if let k = entries.firstIndex(where: { $0.name == name }) { entries[k].bit = Int32(bit) } else { entries.append((name, -1, Int32(bit))) }
            node.required |= 1 << UInt64(bit)
        }
        if !entries.isEmpty { table(&node, entries) }
        nodes[Int(at)] = node
    }

    /// Up to 8 bytes as the walk loads them (x86-64 and arm64 are little-endian).
    static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for (k, b) in bytes.enumerated() { value |= UInt64(b) << (8 * UInt64(k)) }
        return value
    }

    /// Appends an entry, and the entry first guessed after it.
    mutating func add(_ prop: sw_prop, next: Int) {
        props.append(prop)
        successors.append(next)
    }

    /// An entry no name matches (its head has no quote), for entry 0, a node's start and
    /// its undeclared members; its child allows anything.
    static var unnamed: sw_prop {
        var entry = sw_prop()
        entry.care = .max
        entry.child = sw_check(node: Int32(SW_NODE_ANY), quick: 0, strings: 0)
        entry.bit = UInt8(SW_UNREQUIRED)
        return entry
    }

    /// The node's members: entries in the order given, after a start entry, and a hash
    /// table of them with twice as many slots as names, probed linearly.
    mutating func table(_ node: inout sw_node, _ entries: [(name: String, child: Int32, bit: Int32)]) {
        var size = 2
        while size < entries.count * 2 { size *= 2 }
        // A node that counts its members guesses entry 0 after every one: each is then
        // counted off the quick path.
        let counted = node.flags & UInt32(SW_COUNTED) != 0
        add(Self.unnamed, next: counted ? 0 : props.count + 1)
        node.props = Int32(props.count)
        node.slots = Int32(slots.count)
        node.mask = UInt32(size - 1)
        let first = slots.count
        slots += Array(repeating: -1, count: size)
        for (k, entry) in entries.enumerated() {
            let bytes = Array(entry.name.utf8)
            if bytes.contains(where: { $0 >= 0x80 }) { node.flags |= UInt32(SW_WIDE_NAMES) }
            if bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) { node.flags |= UInt32(SW_ESCAPED_NAMES) }
            let prefix = Self.littleEndian(bytes.prefix(8)), suffix = bytes.count > 8 ? Self.littleEndian(bytes.suffix(8)) : 0
            let length = UInt32(clamping: bytes.count)
            var slot = serializerd_schema_slot(prefix, suffix, length, node.mask)
            while slots[first + Int(slot)] >= 0 { slot = (slot + 1) & node.mask }
            slots[first + Int(slot)] = Int32(props.count)
            var prop = sw_prop()
            withUnsafeMutableBytes(of: &prop.head) { head in
                head.copyBytes(from: (bytes + [UInt8(ascii: "\"")]).prefix(head.count))
                if bytes.count >= head.count { head[head.count - 1] = 0 }
            }
            prop.care = serializerd_schema_care(bytes.count)
            prop.bit = UInt8(entry.bit >= 0 ? entry.bit : SW_UNREQUIRED)
            withUnsafeBytes(of: length.littleEndian) { names += $0 }
            prop.name = UInt32(names.count)
            prop.child = sw_check(node: entry.child >= 0 ? entry.child : node.additional, quick: 0, strings: 0)
            // Objects often have their members in the order declared. (The last entry's
            // next is itself: the one after it is another node's.)
            add(prop, next: counted ? 0 : k + 1 < entries.count ? props.count + 1 : props.count)
            names += bytes
        }
    }
}
