internal import CVector

/// A linear pre-scan that refuses start tags with more attributes than libxml2 can check
/// in linear time: libxml2 2.9 compares each attribute with every earlier one of the same
/// element (O(n²) per tag: one element with 10^6 attributes kept a worker busy for
/// minutes). Counting `=` outside quotes inside start tags, skipping comments, CDATA,
/// processing instructions and declarations, bounds that work before libxml2 sees a byte.
/// The bytes are UTF-8 (XMLEncoding), so every `<`, `=`, `>` and quote byte is that character.
enum XMLAttributeScan {
    /// Attributes allowed on one element; beyond, the document is refused.
    static let limit = 256

    static func check(_ bytes: [UInt8], limit: Int = XMLAttributeScan.limit) throws(TranscodeError) {
        // An attribute takes at least 4 bytes (`n=""`) and none holds a `<`, so an element
        // with more than `limit` of them spans more than 4 × limit bytes up to the next `<`.
        // Where no such gap exists (most documents) the exact scan is not needed.
        guard hasGap(bytes, longerThan: 4 * limit) else { return }
        let failure: Int? = bytes.withUnsafeBufferPointer { p -> Int? in
            let n = p.count
            var i = 0
            while i < n {
                guard p[i] == 0x3C else { i += 1; continue }   // '<'
                let tagStart = i
                i += 1
                if i < n && p[i] == 0x21 {   // '<!': comment, CDATA or a declaration
                    if i + 2 < n && p[i + 1] == 0x2D && p[i + 2] == 0x2D { i = skip(p, from: i + 3, past: [0x2D, 0x2D, 0x3E]) }
                    else if i + 7 < n && p[i + 1] == 0x5B { i = skip(p, from: i + 1, past: [0x5D, 0x5D, 0x3E]) }
                    else { i = skipDeclaration(p, from: i + 1) }
                    continue
                }
                if i < n && p[i] == 0x3F { i = skip(p, from: i + 1, past: [0x3F, 0x3E]); continue }   // '<?'
                // A start or end tag: count `=` outside quoted values until '>'.
                var count = 0
                var quote: UInt8 = 0
                while i < n {
                    let c = p[i]
                    if quote != 0 {
                        if c == quote { quote = 0 }
                    } else if c == 0x22 || c == 0x27 {
                        quote = c
                    } else if c == 0x3D {
                        count += 1
                        if count > limit { return tagStart }
                    } else if c == 0x3E {
                        break
                    }
                    i += 1
                }
                i += 1
            }
            return nil
        }
        if let at = failure {
            throw TranscodeError("the element starting at byte \(at) has more than \(limit) attributes")
        }
    }

    /// Whether two consecutive `<` (or the last one and the end) lie more than `length`
    /// bytes apart: sixteen bytes per step (a compare and a mask), against about 15
    /// instructions per byte for the exact scan.
    static func hasGap(_ bytes: [UInt8], longerThan length: Int) -> Bool {
        precondition(length >= 16, "two `<` in one sixteen-byte step are closer than that")
        return bytes.withUnsafeBytes { raw -> Bool in
            let n = raw.count
            var last = -1   // no `<` yet: a gap before the first one holds no element
            var i = 0
            let open = SIMD16<Int8>(repeating: 0x3C)
            while i + 16 <= n {
                let v = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<Int8>.self)
                let m = serializerd_movemask(serializerd_eq(v, open))
                if m != 0 {
                    let first = i + m.trailingZeroBitCount
                    if last >= 0 && first - last > length { return true }
                    last = i + 31 - m.leadingZeroBitCount
                }
                i += 16
            }
            while i < n {
                if raw[i] == 0x3C {
                    if last >= 0 && i - last > length { return true }
                    last = i
                }
                i += 1
            }
            return last >= 0 && n - last > length
        }
    }

    /// The index just past `terminator`, or the end.
    static func skip(_ p: UnsafeBufferPointer<UInt8>, from start: Int, past terminator: [UInt8]) -> Int {
        var i = start
        let last = terminator.count - 1
        while i + last < p.count {
            if p[i] == terminator[0] {
                var k = 1
                while k <= last && p[i + k] == terminator[k] { k += 1 }
                if k > last { return i + last + 1 }
            }
            i += 1
        }
        return p.count
    }

    /// Past a `<!DOCTYPE …>`-style declaration, whose internal subset (`[…]`) and quoted
    /// strings may hold '>'.
    static func skipDeclaration(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        var depth = 0
        var quote: UInt8 = 0
        while i < p.count {
            let c = p[i]
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == 0x22 || c == 0x27 {
                quote = c
            } else if c == 0x5B {
                depth += 1
            } else if c == 0x5D {
                depth = max(0, depth - 1)
            } else if c == 0x3E && depth == 0 {
                return i + 1
            }
            i += 1
        }
        return p.count
    }
}
