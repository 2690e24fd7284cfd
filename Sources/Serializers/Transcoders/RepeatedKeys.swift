/// A property-list dictionary with a repeated key keeps the last (as CFPropertyList
/// does; DESIGN §5: an object serializerd builds never repeats a member). The readers
/// write JSON as they go, so each notes its keys' hashes per open dictionary here; a
/// dictionary whose keys repeat marks the output, which is then rebuilt once from a tree
/// (rare: only such documents pay for it).
struct RepeatedKeys {
    /// Hashes of the keys of every open dictionary, innermost last.
    private var hashes: [UInt64] = []
    /// Some dictionary had two keys with the same hash (a collision only costs the rebuild).
    private(set) var found = false

    /// Where the next dictionary's keys begin.
    var mark: Int { hashes.count }

    mutating func note(_ key: UnsafeRawBufferPointer) {
        hashes.append(KeyHash.hash(key, scope: 0))
    }

    /// The dictionary whose keys begin at `mark` has ended.
    mutating func close(from mark: Int) {
        if hashes.count - mark > 1 && !found {
            // Sorted where they lie (they go next anyway): equal hashes end up side by side,
            // with nothing allocated.
            hashes[mark...].sort()
            for k in (mark + 1)..<hashes.count where hashes[k] == hashes[k - 1] {
                found = true
                break
            }
        }
        hashes.removeSubrange(mark...)
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
