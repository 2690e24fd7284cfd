extension FormTree {
    /// The JSON, in two walks of the tree: the first measures it, charging `budget` as it
    /// grows (a form whose JSON would pass the cap is refused before a byte is written);
    /// the second writes into exactly that much, with no growth or per-append checks.
    mutating func write(budget: OutputBudget) throws(TranscodeError) -> [UInt8] {
        // Lookups are over: the table's memory is free for the output.
        table = MemberTable(slotsFor: 0)
        let t = UnsafeBufferPointer(start: text.base, count: text.count)
        let length = try walk(t, into: nil, charging: budget)
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            // Without a budget the walk has nothing to throw.
            count = (try? walk(t, into: buffer.baseAddress!, charging: nil)) ?? 0
        }
    }

    /// One walk in output order with an explicit stack (keys nest up to `maxDepth`, deeper
    /// than recursion on a worker's stack allows). Writes at `out` when given; returns the
    /// length either way, charging `budget` (when given) per member.
    func walk(_ t: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>?, charging budget: OutputBudget?) throws(TranscodeError) -> Int {
        var at = 0
        @inline(__always) func put(_ byte: UInt8) {
            out?[at] = byte
            at += 1
        }
        // Per open container: the next child to write.
        var stack: [(container: Int32, child: Int32)] = [(0, a[0])]
        put(UInt8(ascii: "{"))
        while let (container, child) = stack.last {
            let isArray = kind[Int(container)] == .array
            guard child >= 0 else {
                put(isArray ? UInt8(ascii: "]") : UInt8(ascii: "}"))
                stack.removeLast()
                continue
            }
            if child != a[Int(container)] { put(UInt8(ascii: ",")) }
            stack[stack.count - 1].child = next[Int(child)]
            if !isArray {
                at += Self.quoted(t, keyStart[Int(child)], keyEnd[Int(child)], at: out.map { $0 + at })
                put(UInt8(ascii: ":"))
            }
            switch kind[Int(child)] {
            case .null:
                put(UInt8(ascii: "n")); put(UInt8(ascii: "u")); put(UInt8(ascii: "l")); put(UInt8(ascii: "l"))
            case .string: at += Self.quoted(t, a[Int(child)], b[Int(child)], at: out.map { $0 + at })
            case .array:
                put(UInt8(ascii: "["))
                stack.append((child, a[Int(child)]))
            case .object:
                put(UInt8(ascii: "{"))
                stack.append((child, a[Int(child)]))
            }
            if let budget { try budget.charge(at, "the JSON") }
        }
        return at
    }

    /// `"…"` for `t[s..<e]`: written at `out` when given; its length either way.
    @inline(__always)
    static func quoted(_ t: UnsafeBufferPointer<UInt8>, _ s: Int32, _ e: Int32, at out: UnsafeMutablePointer<UInt8>?) -> Int {
        let bytes = UnsafeBufferPointer(rebasing: t[Int(s)..<Int(e)])
        guard let out else { return JSONEscaping.quotedLength(bytes) }
        return JSONEscaping.writeQuoted(bytes, to: out)
    }
}
