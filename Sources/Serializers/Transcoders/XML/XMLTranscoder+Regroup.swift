/// Regrouping: an element whose children repeat a name after a different one
/// (`<a/><b/><a/>`) is rewritten with each name's values together, in order of first
/// appearance, once it ends.
extension XMLJSONCore {
    /// One name's members during a regroup.
    struct Group {
        var name: UInt16
        var asArray: Bool
        var members = 0
        var valueBytes = 0
        var start = 0    // where its first value goes in the scratch buffer
        var cursor = 0   // where its next value goes
    }

    /// Where child record `k`'s value ends: before the next record's `[`, and when that
    /// one was written with its key, before its `]` (closing this run), separator, key and `:`.
    @inline(__always)
    mutating func valueEnd(_ k: Int, last: Int, end: Int) -> Int {
        guard k < last else { return end }
        let next = children[k + 1]
        var gap = next.flags & Child.bracketFlag != 0 ? 1 : 0
        if next.flags & Child.keyedFlag != 0 {
            let this = children[k]
            gap += (this.forced || this.several ? 1 : 0) + 1 + names.quoted(Int(next.name)).count + 1
        }
        return Int(next.valueStart) - gap
    }

    /// Rewrites this element's members grouped by name in order of first appearance.
    /// Two passes over the children (8-byte records), no sort and no index array: the
    /// first sizes every group, so each gets its place in one exactly-sized scratch buffer;
    /// the second copies each value, in document order, to its group's cursor. Group
    /// records sit on a FlatArray: Swift arrays cost three uniqueness checks per child.
    mutating func regroup(_ frame: Frame) {
        let first = Int(frame.childStart)
        // Group number per name, in order of first appearance. The scratch tables are kept
        // across regroups and only their touched slots are reset, so each costs O(children).
        while groupOf.count < names.count { groupOf.append(-1) }
        var groups = FlatArray<Group>()
        defer { for g in 0..<groups.count { groupOf[Int(groups[g].name)] = -1 } }
        let last = children.count - 1, end = out.count
        for k in first...last {
            let child = children[k]
            var g = Int(groupOf[Int(child.name)])
            if g < 0 {
                g = groups.count
                groupOf[Int(child.name)] = Int32(g)
                groups.append(Group(name: child.name, asArray: child.forced))
            }
            groups[g].members += 1
            groups[g].valueBytes += valueEnd(k, last: last, end: end) - Int(child.valueStart)
            if groups[g].members > 1 || child.several { groups[g].asArray = true }
        }
        // Layout: the attributes as written (`{"@a":"v"`), then per group a separator
        // (`{` first when there are no attributes), its key, `:`, and its values (in `[…]`
        // when an array).
        let attributes = Int(frame.attributesEnd - frame.start)
        var total = attributes
        for g in 0..<groups.count {
            let bracket = groups[g].asArray ? 1 : 0
            groups[g].start = total + 1 + names.quoted(Int(groups[g].name)).count + 1 + bracket
            groups[g].cursor = groups[g].start
            total = groups[g].start + groups[g].valueBytes + (groups[g].members - 1) + bracket
        }
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
        defer { scratch.deallocate() }
        scratch.update(from: out.base + Int(frame.start), count: attributes)
        for g in 0..<groups.count {
            let key = names.quoted(Int(groups[g].name))
            var at = groups[g].start - key.count - 2 - (groups[g].asArray ? 1 : 0)
            scratch[at] = g == 0 && attributes == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")
            (scratch + at + 1).update(from: key.baseAddress!, count: key.count)
            at += 1 + key.count
            scratch[at] = UInt8(ascii: ":")
            if groups[g].asArray { scratch[at + 1] = UInt8(ascii: "[") }
        }
        let source = out.base
        for k in first...last {
            let child = children[k]
            let group = groups.base + Int(groupOf[Int(child.name)])
            var at = group.pointee.cursor
            if at != group.pointee.start {
                scratch[at] = UInt8(ascii: ",")
                at += 1
            }
            let length = valueEnd(k, last: last, end: end) - Int(child.valueStart)
            copyBytes(source + Int(child.valueStart), length, to: scratch + at)
            group.pointee.cursor = at + length
        }
        for g in 0..<groups.count where groups[g].asArray { scratch[groups[g].cursor] = UInt8(ascii: "]") }
        out.truncate(to: Int(frame.start))
        out.append(UnsafeBufferPointer(start: scratch, count: total))
    }
}
