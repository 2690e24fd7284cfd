/// A property-list dictionary with a repeated key keeps the last (as CFPropertyList
/// does; DESIGN §5: an object serializerd builds never repeats a member). The readers
/// write JSON as they go and hash each key as they write it; a dictionary whose key hashes
/// repeat marks the output, which is then rebuilt once from a tree (rare: only such
/// documents pay for it, and a hash collision costs only that rebuild). The binary reader
/// keeps a dictionary's hashes on its own stack; the XML builder, which is called per
/// event, keeps them here.
struct RepeatedKeys {
    /// Hashes of the keys of every open dictionary, innermost last.
    private var hashes: [UInt64] = []
    /// Some dictionary had two keys with the same hash.
    private(set) var found = false

    /// Where the next dictionary's keys begin.
    var mark: Int { hashes.count }

    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 { KeyHash.hash(key, scope: 0) }

    mutating func note(hash: UInt64) { hashes.append(hash) }

    /// The dictionary whose keys begin at `mark` has ended.
    mutating func close(from mark: Int) {
        let n = hashes.count - mark
        if n > 1 && !found {
            found = hashes.withUnsafeMutableBufferPointer { Self.repeats(UnsafeMutableBufferPointer(rebasing: $0[mark...])) }
        }
        hashes.removeLast(n)
    }

    /// Whether two of one dictionary's key hashes are equal. A few keys: every pair. More:
    /// an open-addressed set at most half full, on the stack for a usual dictionary (the
    /// hashes are well mixed already: their low bits index it). Zero marks an empty slot,
    /// so a zero hash is noted aside.
    static func repeats(_ keys: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        let n = keys.count
        if n <= 16 {
            for i in 1..<max(n, 1) { for j in 0..<i where keys[i] == keys[j] { return true } }
            return false
        }
        var size = 64
        while size < 2 * n { size *= 2 }
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: size) { slots in
            slots.initialize(repeating: 0)
            let mask = size - 1
            var zero = false
            for key in keys {
                if key == 0 {
                    if zero { return true }
                    zero = true
                    continue
                }
                var slot = Int(truncatingIfNeeded: key) & mask
                while slots[slot] != 0 {
                    if slots[slot] == key { return true }
                    slot = (slot + 1) & mask
                }
                slots[slot] = key
            }
            return false
        }
    }

    /// `json` with every object's repeated members reduced to the last one, at the last
    /// one's place.
    static func lastWins(_ json: [UInt8], maxDepth: Int) throws(TranscodeError) -> [UInt8] {
        let tree: JSONValue
        do { tree = try JSONValue.parse(json, options: JSONReadOptions(allowFragments: true, maxDepth: maxDepth + 1)) } catch {
            throw TranscodeError("property list: \(error.message)")
        }
        return NormalizedJSON(lastWins(tree)).bytes
    }

    static func lastWins(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            var last: [String: Int] = [:]
            for (k, member) in members.enumerated() { last[member.0] = k }
            return .object(members.enumerated().filter { last[$0.element.0] == $0.offset }.map { ($0.element.0, lastWins($0.element.1)) })
        case .array(let items):
            return .array(items.map(lastWins))
        default:
            return value
        }
    }
}
