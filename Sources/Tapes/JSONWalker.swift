/// A strict JSON reader (RFC 8259) that walks a document without building it, so a HAR
/// file can be read one entry at a time: the members it does not need are checked and
/// passed over, an entry's bytes are handed out whole. Holds nothing but a position: a
/// 256 MiB tape costs no more than its bytes and the entries made of it (DESIGN §2).
/// UTF-8 is checked by the caller over the whole document first.
struct JSONWalker {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var at = 0
    let maxDepth: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Every failure reads `not JSON: … at byte N`.
    func fail(_ message: String) -> HARError { HARError("not JSON: \(message) at byte \(at)") }

    mutating func skipWhitespace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    /// The next byte after whitespace, not taken.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return at < bytes.count ? bytes[at] : nil
    }

    mutating func take(_ byte: UInt8) throws(HARError) {
        guard peek() == byte else {
            throw fail(at < bytes.count ? "expected '\(Character(Unicode.Scalar(byte)))'" : "unexpected end of input")
        }
        at += 1
    }

    /// After a member or element: true when another follows (`,` taken), false at `close` (taken).
    mutating func next(closing close: UInt8) throws(HARError) -> Bool {
        switch peek() {
        case UInt8(ascii: ","): at += 1; return true
        case close: at += 1; return false
        case nil: throw fail("unexpected end of input")
        default: throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))'")
        }
    }

    /// Opens an object or array (`{` or `[` taken); true when it has a first member.
    mutating func open(_ byte: UInt8) throws(HARError) -> Bool {
        try take(byte)
        let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        if peek() == close {
            at += 1
            return false
        }
        return true
    }

    /// A member's name and the `:` after it; the name's bytes between the quotes, as written.
    mutating func memberName() throws(HARError) -> Range<Int> {
        guard peek() == UInt8(ascii: "\"") else { throw fail("expected a member name") }
        let name = try string()
        try take(UInt8(ascii: ":"))
        return name
    }

    /// Whether a name as written means `expected` (an escaped spelling is read as JSON does).
    func name(_ range: Range<Int>, is expected: String) -> Bool {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        guard raw.contains(UInt8(ascii: "\\")) else { return raw.elementsEqual(expected.utf8) }
        var decoded: [UInt8] = []
        var k = 0
        while k < raw.count {
            if raw[k] != UInt8(ascii: "\\") {
                decoded.append(raw[k])
                k += 1
                continue
            }
            let escape = raw[k + 1]
            k += 2
            switch escape {
            case UInt8(ascii: "u"):
                var unit: UInt32 = 0
                for _ in 0..<4 {
                    unit = unit << 4 | UInt32(Self.hexValue(raw[k]) ?? 0)
                    k += 1
                }
                // A name this walker compares is ASCII; anything wider cannot equal it.
                guard unit < 0x80 else { return false }
                decoded.append(UInt8(unit))
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            default: decoded.append(escape)
            }
        }
        return decoded.elementsEqual(expected.utf8)
    }

    /// Checks and passes over one value; its bytes.
    @discardableResult
    mutating func skipValue(depth: Int = 0) throws(HARError) -> Range<Int> {
        guard let first = peek() else { throw fail("unexpected end of input") }
        let start = at
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < maxDepth else { throw fail("nested deeper than \(maxDepth) levels") }
            let isObject = first == UInt8(ascii: "{")
            if try open(first) {
                repeat {
                    if isObject { _ = try memberName() }
                    try skipValue(depth: depth + 1)
                } while try next(closing: isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw fail("unexpected character")
        }
        return start..<at
    }

    mutating func literal(_ word: StaticString) throws(HARError) {
        let n = word.utf8CodeUnitCount
        guard bytes.count - at >= n, UnsafeBufferPointer(rebasing: bytes[at..<at + n]).elementsEqual(
            UnsafeBufferPointer(start: word.utf8Start, count: n)) else { throw fail("invalid literal") }
        at += n
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func number() throws(HARError) {
        func digits() throws(HARError) {
            guard at < bytes.count, Self.isDigit(bytes[at]) else { throw fail("invalid number") }
            while at < bytes.count, Self.isDigit(bytes[at]) { at += 1 }
        }
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        if at < bytes.count, bytes[at] == UInt8(ascii: "0") { at += 1 } else { try digits() }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            try digits()
        }
        if at < bytes.count, bytes[at] | 0x20 == UInt8(ascii: "e") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            try digits()
        }
    }

    /// A string (opening quote next); the bytes between its quotes.
    mutating func string() throws(HARError) -> Range<Int> {
        at += 1
        let start = at
        while at < bytes.count {
            let c = bytes[at]
            if c == UInt8(ascii: "\"") {
                at += 1
                return start..<at - 1
            }
            guard c >= 0x20 else { throw fail("a control character in a string") }
            if c == UInt8(ascii: "\\") {
                guard at + 1 < bytes.count else { break }
                switch bytes[at + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                     UInt8(ascii: "r"), UInt8(ascii: "t"):
                    at += 2
                case UInt8(ascii: "u"):
                    let unit = try hex4(at + 2)
                    at += 6
                    // UTF-16 surrogates come in pairs, high then low, as the JSON reader requires.
                    if unit >= 0xDC00 && unit < 0xE000 { throw fail("lone surrogate in string") }
                    if unit >= 0xD800 && unit < 0xDC00 {
                        guard bytes.count - at >= 6, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u"),
                              case let low = try hex4(at + 2), low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate in string") }
                        at += 6
                    }
                default:
                    throw fail("invalid escape")
                }
                continue
            }
            at += 1
        }
        throw fail("unterminated string")
    }

    /// The four hex digits at `offset` as a UTF-16 unit.
    func hex4(_ offset: Int) throws(HARError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw fail("invalid \\u escape") }
        var unit: UInt32 = 0
        for k in offset..<offset + 4 {
            guard let digit = Self.hexValue(bytes[k]) else { throw fail("invalid \\u escape") }
            unit = unit << 4 | UInt32(digit)
        }
        return unit
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x37
        case 0x61...0x66: c - 0x57
        default: nil
        }
    }
}
