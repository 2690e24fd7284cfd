/// Validates JSON and rewrites it as normalized JSON in one pass, without building a tree.
///
/// Output: compact UTF-8, members in source order, number lexemes verbatim, strings
/// with the RFC 8785 escape set (`\"`, `\\`, `\b\f\n\r\t`, other controls as `\u00xx`,
/// everything else literal — so `\/` becomes `/` and `\u00e9` becomes `é`).
/// The output is never longer than the UTF-8 input, which lets the writer skip
/// capacity checks. Nesting is tracked on an explicit stack, so depth is a policy
/// (`maxDepth`), never a stack overflow.
public enum JSONNormalizer {
    public static func normalize(_ input: [UInt8], options: JSONReadOptions = .init()) throws(JSONError) -> [UInt8] {
        let detected = input.withUnsafeBufferPointer { JSONEncodingDetection.detect($0) }
        if case .utf8(let bom) = detected {
            return try normalizeUTF8(input, from: bom, options: options)
        }
        let utf8 = try input.withUnsafeBufferPointer { (b) throws(JSONError) in
            try JSONEncodingDetection.transcodeToUTF8(b, detected)
        }
        return try normalizeUTF8(utf8, from: 0, options: options)
    }

    static func normalizeUTF8(_ input: [UInt8], from start: Int, options: JSONReadOptions) throws(JSONError) -> [UInt8] {
        let capacity = max(input.count - start, 1)
        var failure: JSONError?
        let out = input.withUnsafeBufferPointer { inBuf in
            [UInt8](unsafeUninitializedCapacity: capacity) { outBuf, count in
                var core = NormalizerCore(input: inBuf, start: start, output: outBuf.baseAddress!, options: options)
                do throws(JSONError) {
                    try core.run()
                    count = core.w
                } catch {
                    failure = error
                    count = 0
                }
            }
        }
        if let failure { throw failure }
        return out
    }
}

/// The normalizer's state: input cursor `i`, output cursor `w`, container stack.
struct NormalizerCore: ~Copyable {
    let p: UnsafePointer<UInt8>
    let n: Int
    let input: UnsafeBufferPointer<UInt8>
    let o: UnsafeMutablePointer<UInt8>
    let options: JSONReadOptions
    var i: Int
    var w = 0
    /// One entry per open container: bit 0 = array, bit 1 = a member was written.
    /// A raw buffer: Array's checks on every token cost ~10% here.
    let stack: UnsafeMutablePointer<UInt8>
    var depth = 0

    static let isArray: UInt8 = 1, hasMember: UInt8 = 2

    init(input: UnsafeBufferPointer<UInt8>, start: Int, output: UnsafeMutablePointer<UInt8>, options: JSONReadOptions) {
        self.input = input
        self.p = input.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.n = input.count
        self.i = start
        self.o = output
        self.options = options
        stack = .allocate(capacity: options.maxDepth + 1)
    }

    deinit { stack.deallocate() }

    func fail(_ message: String, at offset: Int) -> JSONError {
        JSONError(message, offset: offset, in: input)
    }

    func unexpected(_ expected: String) -> JSONError {
        guard i < n else { return fail("unexpected end of input, expected \(expected)", at: i) }
        let c = p[i]
        let shown = (c >= 0x20 && c < 0x7F) ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16))"
        return fail("unexpected \(shown), expected \(expected)", at: i)
    }

    @inline(__always) mutating func put(_ byte: UInt8) { o[w] = byte; w += 1 }

    @inline(__always) mutating func skipWhitespace() {
        while i < n {
            let c = p[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    mutating func run() throws(JSONError) {
        skipWhitespace()
        if !options.allowFragments, i < n, p[i] != UInt8(ascii: "{"), p[i] != UInt8(ascii: "[") {
            throw fail("top-level value is not an object or array, and fragments are not allowed", at: i)
        }
        try parseValues()
        skipWhitespace()
        if i < n { throw unexpected("end of input after the top-level value") }
    }

    /// Parses one complete top-level value iteratively.
    mutating func parseValues() throws(JSONError) {
        while true {
            // At a value's first byte.
            guard i < n else { throw unexpected("a value") }
            switch p[i] {
            case UInt8(ascii: "{"):
                try push(0)
                put(UInt8(ascii: "{")); i += 1
                skipWhitespace()
                if i < n && p[i] == UInt8(ascii: "}") { i += 1; put(UInt8(ascii: "}")); depth -= 1 } else {
                    if try beginMember() { continue }
                }
            case UInt8(ascii: "["):
                try push(NormalizerCore.isArray)
                put(UInt8(ascii: "[")); i += 1
                skipWhitespace()
                if i < n && p[i] == UInt8(ascii: "]") { i += 1; put(UInt8(ascii: "]")); depth -= 1 } else {
                    if try beginElement() { continue }
                }
            case UInt8(ascii: "\""): try copyString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try copyNumber()
            case UInt8(ascii: "t"): try copyLiteral("true")
            case UInt8(ascii: "f"): try copyLiteral("false")
            case UInt8(ascii: "n"): try copyLiteral("null")
            default: throw unexpected("a value")
            }
            // After a value: close containers or move to the next member/element.
            if try afterValue() { return }
        }
    }

    /// Returns true when the top-level value is complete; false when positioned at the
    /// next value to parse.
    @inline(__always)
    mutating func afterValue() throws(JSONError) -> Bool {
        while depth > 0 {
            let top = stack[depth - 1]
            skipWhitespace()
            guard i < n else { throw unexpected(top & NormalizerCore.isArray != 0 ? "',' or ']'" : "',' or '}'") }
            let c = p[i]
            if top & NormalizerCore.isArray != 0 {
                if c == UInt8(ascii: ",") {
                    i += 1; skipWhitespace()
                    if try beginElement() { return false }
                    continue
                }
                guard c == UInt8(ascii: "]") else { throw unexpected("',' or ']'") }
                i += 1; put(c); depth -= 1
            } else {
                if c == UInt8(ascii: ",") {
                    i += 1; skipWhitespace()
                    if try beginMember() { return false }
                    continue
                }
                guard c == UInt8(ascii: "}") else { throw unexpected("',' or '}'") }
                i += 1; put(c); depth -= 1
            }
        }
        return true
    }

    mutating func push(_ kind: UInt8) throws(JSONError) {
        guard depth < options.maxDepth else {
            throw fail("nesting deeper than the limit of \(options.maxDepth)", at: i)
        }
        stack[depth] = kind
        depth += 1
    }

    /// At an object member's key. Writes `,"key":` and returns true when the value
    /// should be parsed next; returns false when a null value was dropped.
    @inline(__always)
    mutating func beginMember() throws(JSONError) -> Bool {
        guard i < n, p[i] == UInt8(ascii: "\"") else { throw unexpected("a string key") }
        let mark = w
        let top = depth - 1
        if stack[top] & NormalizerCore.hasMember != 0 { put(UInt8(ascii: ",")) }
        try copyString()
        skipWhitespace()
        guard i < n, p[i] == UInt8(ascii: ":") else { throw unexpected("':'") }
        i += 1
        put(UInt8(ascii: ":"))
        skipWhitespace()
        if options.removeNullValues && atNull() {
            try skipNull()
            w = mark
            return false
        }
        stack[top] |= NormalizerCore.hasMember
        return true
    }

    /// At an array element. Writes the separator and returns true when the element
    /// should be parsed next; returns false when a null element was dropped.
    @inline(__always)
    mutating func beginElement() throws(JSONError) -> Bool {
        if options.removeNullValues && atNull() {
            try skipNull()
            return false
        }
        let top = depth - 1
        if stack[top] & NormalizerCore.hasMember != 0 { put(UInt8(ascii: ",")) }
        stack[top] |= NormalizerCore.hasMember
        return true
    }

    @inline(__always) func atNull() -> Bool { i < n && p[i] == UInt8(ascii: "n") }

    mutating func skipNull() throws(JSONError) {
        let mark = w
        try copyLiteral("null")
        w = mark
    }

    @inline(__always)
    mutating func copyLiteral(_ word: StaticString) throws(JSONError) {
        let len = word.utf8CodeUnitCount
        let bytes = word.utf8Start
        guard i + len <= n else { throw fail("invalid literal, expected '\(word)'", at: i) }
        for k in 0..<len where p[i + k] != bytes[k] {
            throw fail("invalid literal, expected '\(word)'", at: i + k)
        }
        (o + w).update(from: p + i, count: len)
        w += len
        i += len
    }

    @inline(__always)
    mutating func copyNumber() throws(JSONError) {
        let start = i
        if p[i] == UInt8(ascii: "-") { i += 1 }
        guard i < n, isDigit(p[i]) else { throw unexpected("a digit") }
        if p[i] == UInt8(ascii: "0") { i += 1 } else { while i < n && isDigit(p[i]) { i += 1 } }
        if i < n && p[i] == UInt8(ascii: ".") {
            i += 1
            guard i < n, isDigit(p[i]) else { throw unexpected("a digit after the decimal point") }
            while i < n && isDigit(p[i]) { i += 1 }
        }
        if i < n && (p[i] | 0x20) == UInt8(ascii: "e") {
            i += 1
            if i < n && (p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < n, isDigit(p[i]) else { throw unexpected("a digit in the exponent") }
            while i < n && isDigit(p[i]) { i += 1 }
        }
        (o + w).update(from: p + start, count: i - start)
        w += i - start
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    /// Copies a string starting at its opening quote, re-escaping to the normalized set.
    @inline(__always)
    mutating func copyString() throws(JSONError) {
        let open = i
        put(UInt8(ascii: "\""))
        i += 1
        while true {
            // Eight bytes at a time: each word is stored whole, then both cursors advance
            // to its first quote, backslash, control or non-ASCII byte. Storing past that
            // byte is safe: the output never outruns the input (w ≤ i), so o + w + 8 stays
            // within the output's capacity whenever i + 8 ≤ n.
            while i + 8 <= n {
                let x = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                let high: UInt64 = 0x8080_8080_8080_8080, ones: UInt64 = 0x0101_0101_0101_0101
                let quote = x ^ (ones &* 0x22), slash = x ^ (ones &* 0x5C)
                var special = (x & high)
                special |= (x &- ones &* 0x20) & ~x & high
                special |= (quote &- ones) & ~quote & high
                special |= (slash &- ones) & ~slash & high
                UnsafeMutableRawPointer(o + w).storeBytes(of: x, as: UInt64.self)
                if special != 0 {
                    // The lowest flagged byte is exact (borrows only propagate upwards).
                    let k = special.trailingZeroBitCount >> 3
                    i += k
                    w += k
                    break
                }
                i += 8
                w += 8
            }
            while i < n {
                let c = p[i]
                if c < 0x20 || c == 0x22 || c == 0x5C || c >= 0x80 { break }
                put(c)
                i += 1
            }
            guard i < n else { throw fail("unterminated string", at: open) }
            let c = p[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                put(c)
                return
            } else if c == UInt8(ascii: "\\") {
                try copyEscape()
            } else if c < 0x20 {
                throw fail("unescaped control character in string", at: i)
            } else {
                guard let len = UTF8Validation.sequenceLength(p, i, n) else {
                    throw fail("invalid UTF-8 in string", at: i)
                }
                (o + w).update(from: p + i, count: len)
                w += len
                i += len
            }
        }
    }

    mutating func copyEscape() throws(JSONError) {
        let at = i
        guard i + 1 < n else { throw fail("unterminated escape sequence", at: at) }
        let e = p[i + 1]
        i += 2
        var cp: UInt32
        switch e {
        case UInt8(ascii: "\""): cp = 0x22
        case UInt8(ascii: "\\"): cp = 0x5C
        case UInt8(ascii: "/"): cp = 0x2F
        case UInt8(ascii: "b"): cp = 0x08
        case UInt8(ascii: "f"): cp = 0x0C
        case UInt8(ascii: "n"): cp = 0x0A
        case UInt8(ascii: "r"): cp = 0x0D
        case UInt8(ascii: "t"): cp = 0x09
        case UInt8(ascii: "u"):
            cp = try hex4(at: i)
            i += 4
            if cp >= 0xD800 && cp < 0xDC00 {
                guard i + 6 <= n, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") else {
                    throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
                }
                let low = try hex4(at: i + 2)
                guard low >= 0xDC00 && low < 0xE000 else {
                    throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            } else if cp >= 0xDC00 && cp < 0xE000 {
                throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
            }
        default:
            throw fail("invalid escape sequence", at: at)
        }
        JSONEscaping.writeScalar(cp, into: o, at: &w)
    }

    func hex4(at k: Int) throws(JSONError) -> UInt32 {
        guard k + 4 <= n else { throw fail("truncated \\u escape", at: k - 2) }
        var v: UInt32 = 0
        for j in 0..<4 {
            let c = p[k + j]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - 0x57
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - 0x37
            default: throw fail("invalid hex digit in \\u escape", at: k + j)
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }
}
