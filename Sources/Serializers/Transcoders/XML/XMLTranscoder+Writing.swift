/// Writing the JSON: keys as children start, attributes, closing an element. Apart from
/// the events (XMLTranscoder.swift) and regrouping (XMLTranscoder+Regroup.swift).
extension XMLJSONCore {
    /// Writes the separator and key for a child of the innermost open element.
    @inline(__always)
    mutating func beginChild(_ name: Int, forced isForced: Bool) {
        let parent = frames.base + (frames.count - 1)
        let name32 = Int32(truncatingIfNeeded: name)
        if name32 == parent.pointee.lastName {
            // The run's record is the last one (the previous sibling's own children are gone).
            let run = children.base + (children.count - 1)
            if !parent.pointee.runOpen {
                // The previous sibling had the same name: make its value an array (unless
                // regrouping will, which adds the brackets itself).
                if !parent.pointee.needsRegroup {
                    out.insert(UInt8(ascii: "["), at: Int(run.pointee.valueStart))
                    run.pointee.valueStart += 1
                    run.pointee.flags |= Child.bracketFlag
                }
                parent.pointee.runOpen = true
            }
            out.append(UInt8(ascii: ","))
            run.pointee.flags |= Child.severalFlag
            return
        }
        let runWasOpen = parent.pointee.runOpen, opened = parent.pointee.opened
        parent.pointee.members += 1
        parent.pointee.lastName = name32
        parent.pointee.runOpen = isForced
        if parent.pointee.needsRegroup {
            // Regrouping rewrites this element from its children's value ranges alone, so
            // from the first repeat on, no separator, key or bracket is written between them.
            children.append(Child(name: UInt16(truncatingIfNeeded: name), flags: isForced ? Child.forcedFlag : 0,
                                  valueStart: Int32(truncatingIfNeeded: out.count)))
            return
        }
        // `]` `,` or `{`, the key, `:`, `[`: one capacity check, then plain stores.
        let key = names.quoted(name)
        out.reserve(key.count + 4)
        let b = out.base
        var at = out.count
        if runWasOpen {
            b[at] = UInt8(ascii: "]")
            at += 1
        }
        b[at] = opened ? UInt8(ascii: ",") : UInt8(ascii: "{")
        copyBytes(key.baseAddress!, key.count, to: b + at + 1)
        at += 1 + key.count
        b[at] = UInt8(ascii: ":")
        at += 1
        if isForced {
            b[at] = UInt8(ascii: "[")
            at += 1
        }
        out.didWrite(upTo: at)
        if seenIn.count < names.count { growSeen() }
        let seen = seenIn.base + name
        if seen.pointee == parent.pointee.serial { parent.pointee.needsRegroup = true }
        seen.pointee = parent.pointee.serial
        parent.pointee.opened = true
        let flags = isForced ? Child.keyedFlag | Child.forcedFlag | Child.bracketFlag : Child.keyedFlag
        children.append(Child(name: UInt16(truncatingIfNeeded: name), flags: flags, valueStart: Int32(truncatingIfNeeded: at)))
    }

    /// Whether two child records name the same element: the exact check for an element
    /// whose `seenIn` marks a descendant may have overwritten (`<r><a/><c><a/></c><a/></r>`:
    /// `c`'s child re-marked `a`, and `r`'s second `a` looked new). A fresh serial stamps
    /// this check's marks.
    mutating func hasRepeatedName(from first: Int) -> Bool {
        serials &+= 1
        let stamp = serials
        if seenIn.count < names.count { growSeen() }
        for k in first..<children.count {
            let seen = seenIn.base + Int(children[k].name)
            if seen.pointee == stamp { return true }
            seen.pointee = stamp
        }
        return false
    }

    mutating func growSeen() {
        while seenIn.count < names.count { seenIn.append(-1) }
    }

    /// Ends an element written in object form: closes any open run, adds `#text`.
    mutating func close(_ frame: Frame, textRange: Range<Int>) {
        if frame.needsRegroup {
            regroup(frame)
        } else if frame.runOpen {
            out.append(UInt8(ascii: "]"))
        }
        if !textRange.isEmpty {
            out.append(frame.members > 0 ? ",\"#text\":" : "\"#text\":")
            out.appendQuoted(textBytes(textRange))
        }
        out.append(UInt8(ascii: "}"))
    }

    mutating func writeNamespaceDeclarations(_ tag: XMLStartTag, into frame: UnsafeMutablePointer<Frame>) {
        guard let ns = tag.namespaces else { return }
        for k in 0..<tag.nsCount {
            openMember(frame)
            out.append("\"@xmlns")
            if let prefix = ns[2 * k] {
                out.append(UInt8(ascii: ":"))
                out.append(UnsafeBufferPointer(start: prefix, count: strlen(prefix)))
            }
            out.append("\":")
            let uri = ns[2 * k + 1]!
            out.appendQuoted(UnsafeBufferPointer(start: uri, count: strlen(uri)))
        }
    }

    mutating func writeAttributes(_ tag: XMLStartTag, into frame: UnsafeMutablePointer<Frame>) {
        guard let attrs = tag.attributes else { return }
        // `namespaces: strip` can give two attributes one name (`p:x`, `q:x`): an object
        // never repeats a member, so those are grouped like repeated siblings.
        if strip && tag.attributeCount > 1 {
            let ids = (0..<tag.attributeCount).map { names.id(prefix: nil, local: attrs[5 * $0]!, attribute: true) }
            if Set(ids).count < ids.count { return writeGroupedAttributes(tag, ids: ids, into: frame) }
        }
        for k in 0..<tag.attributeCount {
            let base = 5 * k
            let id = names.id(prefix: strip ? nil : attrs[base + 1], local: attrs[base]!, attribute: true)
            let key = names.quoted(id)
            let start = attrs[base + 3]!, end = attrs[base + 4]!
            let value = UnsafeBufferPointer(start: start, count: end - start)
            guard value.count <= 256 else {
                openMember(frame)
                out.append(key)
                out.append(UInt8(ascii: ":"))
                out.appendQuoted(value)
                continue
            }
            // `{` or `,`, the key, `:` and the value escaped (at worst 6 bytes a byte):
            // one capacity check, then plain stores.
            out.reserve(key.count + 6 * value.count + 4)
            let b = out.base
            var at = out.count
            b[at] = frame.pointee.opened ? UInt8(ascii: ",") : UInt8(ascii: "{")
            copyBytes(key.baseAddress!, key.count, to: b + at + 1)
            at += 1 + key.count
            b[at] = UInt8(ascii: ":")
            at += 1
            at += JSONEscaping.writeQuoted(value, to: b + at)
            out.didWrite(upTo: at)
            frame.pointee.opened = true
            frame.pointee.members += 1
        }
    }

    /// Attributes whose names collide after stripping: `"@x":["1","2"]`, in the order of
    /// each name's first occurrence, values in document order.
    mutating func writeGroupedAttributes(_ tag: XMLStartTag, ids: [Int], into frame: UnsafeMutablePointer<Frame>) {
        let attrs = tag.attributes!
        var written = Set<Int>()
        for id in ids where written.insert(id).inserted {
            let group = ids.indices.filter { ids[$0] == id }
            openMember(frame)
            out.append(names.quoted(id))
            out.append(UInt8(ascii: ":"))
            if group.count > 1 { out.append(UInt8(ascii: "[")) }
            for (n, index) in group.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                let start = attrs[5 * index + 3]!, end = attrs[5 * index + 4]!
                out.appendQuoted(UnsafeBufferPointer(start: start, count: end - start))
            }
            if group.count > 1 { out.append(UInt8(ascii: "]")) }
        }
    }

    mutating func openMember(_ frame: UnsafeMutablePointer<Frame>) {
        if !frame.pointee.opened {
            out.append(UInt8(ascii: "{"))
            frame.pointee.opened = true
        } else {
            out.append(UInt8(ascii: ","))
        }
        frame.pointee.members += 1
    }

    mutating func textBytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.base + range.lowerBound, count: range.count)
    }

    mutating func trimmed(_ range: Range<Int>) -> Range<Int> {
        var low = range.lowerBound, high = range.upperBound
        while low < high && XMLBytes.isSpace(text[low]) { low += 1 }
        while high > low && XMLBytes.isSpace(text[high - 1]) { high -= 1 }
        return low..<high
    }
}
