internal import CVector

/// Character data for the XML fast path: text, references, CDATA sections, comments,
/// attribute values and the XML declaration (the structure is in XMLFastScanner.swift).
extension XMLFastScanner {
    /// Text up to the next '<', in runs straight from the input: a reference, a line end
    /// or a CDATA section's end in between splits it, as libxml2's callbacks do.
    @inline(__always)
    mutating func text(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        var run = i
        while true {
            try skipPlain(stoppingAt: 0x3C, 0x26)
            guard i < n else { throw .unsupported }
            let c = p[i]
            if c == 0x3C {
                deliver(from: run, &core)
                return
            } else if c == 0x26 {
                deliver(from: run, &core)
                try deliverReference(&core)
                run = i
            } else if c == 0x0D {
                deliver(from: run, &core)
                newline(&core)
                run = i
            } else if c == 0x5D {
                // `]]>` may not appear in text.
                if has("]]>", at: i) { throw .unsupported }
                i += 1
            }
        }
    }

    /// CDATA section content, from `<![CDATA[` to `]]>`.
    mutating func cdata(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        i += 9
        let start = i
        var run = i
        while true {
            try skipPlain(stoppingAt: 0x5D, 0x5D)
            guard i < n else { throw .unsupported }
            if p[i] == 0x0D {
                deliver(from: run, &core)
                newline(&core)
                run = i
            } else if has("]]>", at: i) {
                deliver(from: run, &core)
                i += 3
                guard i - start <= Self.maxRun else { throw .unsupported }
                return
            } else {
                i += 1
            }
        }
    }

    /// Advances over bytes that need no attention: all but `a`, `b`, `]`, CR, and
    /// control or non-ASCII bytes; the non-ASCII ones are checked on the way. Stops at one
    /// of the others, or the end.
    @inline(__always)
    mutating func skipPlain(stoppingAt a: UInt8, _ b: UInt8) throws(XMLFastStop) {
        let first = SIMD16<Int8>(repeating: Int8(bitPattern: a)), second = SIMD16<Int8>(repeating: Int8(bitPattern: b))
        let bracket = SIMD16<Int8>(repeating: 0x5D), cr = SIMD16<Int8>(repeating: 0x0D)
        let lf = SIMD16<Int8>(repeating: 0x0A), tab = SIMD16<Int8>(repeating: 0x09)
        let space = SIMD16<Int8>(repeating: 0x20)
        while true {
            while i + 16 <= n {
                let v = UnsafeRawPointer(p + i).loadUnaligned(as: SIMD16<Int8>.self)
                // Signed: bytes from 0x80 are below 0x20 too.
                let low = serializerd_lt(v, space) & ~(serializerd_eq(v, lf) | serializerd_eq(v, tab))
                let special = serializerd_eq(v, first) | serializerd_eq(v, second) | serializerd_eq(v, bracket)
                    | serializerd_eq(v, cr) | low
                let mask = serializerd_movemask(special)
                if mask != 0 {
                    i += mask.trailingZeroBitCount
                    break
                }
                i += 16
            }
            while i < n {
                let c = p[i]
                if c == a || c == b || c == 0x5D || c == 0x0D || (c < 0x20 && c != 0x0A && c != 0x09) || c >= 0x80 { break }
                i += 1
            }
            guard i < n else { return }
            let c = p[i]
            if c < 0x80 {
                guard c >= 0x20 || c == 0x0A || c == 0x09 || c == 0x0D else { throw .unsupported }
                return
            }
            let length = XMLBytes.charLength(p, i, n)
            guard length > 0 else { throw .unsupported }
            i += length
        }
    }

    @inline(__always)
    func deliver(from run: Int, _ core: inout XMLJSONCore) {
        if i > run { core.characters(UnsafeBufferPointer(start: p + run, count: i - run)) }
    }

    /// A line end (CR or CR LF) as one LF.
    mutating func newline(_ core: inout XMLJSONCore) {
        var lf: UInt8 = 0x0A
        withUnsafePointer(to: &lf) { core.characters(UnsafeBufferPointer(start: $0, count: 1)) }
        i += 1
        if i < n && p[i] == 0x0A { i += 1 }
    }

    mutating func deliverReference(_ core: inout XMLJSONCore) throws(XMLFastStop) {
        let value = try reference()
        var bytes: UInt32 = 0
        let count = withUnsafeMutableBytes(of: &bytes) { XMLBytes.encode(value, into: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        withUnsafeBytes(of: &bytes) { core.characters(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)) }
    }

    /// The character a reference at `&` stands for: one of the five predefined entities or
    /// a character reference to an XML `Char`.
    mutating func reference() throws(XMLFastStop) -> UInt32 {
        i += 1
        if i < n && p[i] == 0x23 {
            i += 1
            let hex = i < n && p[i] == 0x78
            if hex { i += 1 }
            var value: UInt32 = 0
            var digits = 0
            while i < n && digits < 8 {
                let c = p[i]
                var digit = UInt32(c &- 0x30)
                if digit > 9 {
                    guard hex else { break }
                    let letter = UInt32((c | 0x20) &- 0x61)
                    guard letter < 6 else { break }
                    digit = letter + 10
                }
                value = value * (hex ? 16 : 10) + digit
                digits += 1
                i += 1
            }
            guard digits > 0, digits <= 8, i < n, p[i] == 0x3B, XMLBytes.isChar(value) else { throw .unsupported }
            i += 1
            return value
        }
        let value: UInt32
        if has("lt;", at: i) { value = 0x3C; i += 3 }
        else if has("gt;", at: i) { value = 0x3E; i += 3 }
        else if has("amp;", at: i) { value = 0x26; i += 4 }
        else if has("apos;", at: i) { value = 0x27; i += 5 }
        else if has("quot;", at: i) { value = 0x22; i += 5 }
        else { throw .unsupported }
        return value
    }

    /// The rest of an attribute value into `scratch`, normalized as XML 1.0 §3.3.3 says for
    /// an attribute no DTD declares: each whitespace character (a CR LF pair being one)
    /// becomes a space, references their character. Stops at the closing quote.
    mutating func decodeValue(_ quote: UInt8) throws(XMLFastStop) {
        while i < n {
            let c = p[i]
            if c == quote { return }
            if c == 0x3C { throw .unsupported }
            if c == 0x26 {
                let value = try reference()
                scratch.reserve(4)
                scratch.didWrite(upTo: scratch.count + XMLBytes.encode(value, into: scratch.base + scratch.count))
                continue
            }
            if c >= 0x80 {
                let length = XMLBytes.charLength(p, i, n)
                guard length > 0 else { throw .unsupported }
                scratch.append(UnsafeBufferPointer(start: p + i, count: length))
                i += length
                continue
            }
            if c < 0x20 {
                guard c == 0x09 || c == 0x0A || c == 0x0D else { throw .unsupported }
                if c == 0x0D && i + 1 < n && p[i + 1] == 0x0A { i += 1 }
                scratch.append(0x20)
            } else {
                scratch.append(c)
            }
            i += 1
        }
        throw .unsupported
    }

    /// A comment, from `<!--` past `-->`: no `--` inside, every character an XML `Char`.
    mutating func comment() throws(XMLFastStop) {
        i += 4
        try skipCharacters(until: 0x2D, 0x2D)
        guard has("-->", at: i) else { throw .unsupported }
        i += 3
    }

    /// A processing instruction, from `<?` past `?>`, skipped: an ASCII target that is not
    /// `xml` in any case and has no colon (libxml2 refuses both), then `?>` or whitespace,
    /// characters and `?>`.
    mutating func processingInstruction() throws(XMLFastStop) {
        i += 2
        let start = i
        guard i < n, XMLBytes.isNameStart(p[i]) else { throw .unsupported }
        while i < n && XMLBytes.isNameByte(p[i]) { i += 1 }
        guard i < n, p[i] < 0x80, p[i] != 0x3A, i - start <= 1000 else { throw .unsupported }
        if i - start == 3 && (p[start] | 0x20) == 0x78 && (p[start + 1] | 0x20) == 0x6D && (p[start + 2] | 0x20) == 0x6C {
            throw .unsupported
        }
        if !has("?>", at: i) {
            guard skipSpace() else { throw .unsupported }
            try skipCharacters(until: 0x3F, 0x3E)
        }
        i += 2
    }

    /// Advances over XML `Char`s to the first `a` followed by `b`, leaving `i` at that `a`.
    /// A byte that is no `Char`, the end, or more than `maxRun` bytes leave the body to
    /// libxml2.
    mutating func skipCharacters(until a: UInt8, _ b: UInt8) throws(XMLFastStop) {
        let start = i
        while i < n {
            let c = p[i]
            if c == a && i + 1 < n && p[i + 1] == b {
                guard i - start <= Self.maxRun else { throw .unsupported }
                return
            }
            if c >= 0x80 {
                let length = XMLBytes.charLength(p, i, n)
                guard length > 0 else { throw .unsupported }
                i += length
                continue
            }
            guard c >= 0x20 || c == 0x09 || c == 0x0A || c == 0x0D else { throw .unsupported }
            i += 1
        }
        throw .unsupported
    }

    /// `<?xml version="1.0" encoding="…" standalone="…"?>`, strictly: anything else in
    /// the declaration (another version, a stray pseudo-attribute) is left to libxml2. The
    /// encoding named is not acted on: the body is UTF-8 by now (XMLEncoding).
    mutating func declaration() throws(XMLFastStop) {
        i += 5
        guard skipSpace(), has("version", at: i) else { throw .unsupported }
        i += 7
        let version = try quotedEnd()
        guard version == 3, has("1.0", at: i - 4) else { throw .unsupported }
        var spaced = skipSpace()
        if spaced && has("encoding", at: i) {
            i += 8
            // EncName: [A-Za-z] ([A-Za-z0-9._] | '-')*
            let length = try quotedEnd()
            let start = i - 1 - length
            guard length >= 1, (p[start] | 0x20) &- 0x61 < 26 else { throw .unsupported }
            for k in start..<(i - 1) where !XMLBytes.isNameByte(p[k]) { throw .unsupported }
            spaced = skipSpace()
        }
        if spaced && has("standalone", at: i) {
            i += 10
            let length = try quotedEnd()
            guard (length == 3 && has("yes", at: i - 4)) || (length == 2 && has("no", at: i - 3)) else { throw .unsupported }
            _ = skipSpace()
        }
        guard has("?>", at: i) else { throw .unsupported }
        i += 2
    }

    /// `S? = S? "…"` (or single quotes): leaves `i` past the closing quote and returns the
    /// value's length, which ends one byte before `i`.
    mutating func quotedEnd() throws(XMLFastStop) -> Int {
        let quote = try openingQuote()
        let start = i
        while i < n && p[i] != quote && p[i] != 0x3E { i += 1 }
        guard i < n, p[i] == quote else { throw .unsupported }
        i += 1
        return i - 1 - start
    }

    /// `S? = S?` and a quote, which is returned; `i` is then past it.
    @inline(__always)
    mutating func openingQuote() throws(XMLFastStop) -> UInt8 {
        _ = skipSpace()
        guard i < n, p[i] == 0x3D else { throw .unsupported }
        i += 1
        _ = skipSpace()
        guard i < n, p[i] == 0x22 || p[i] == 0x27 else { throw .unsupported }
        i += 1
        return p[i - 1]
    }
}
