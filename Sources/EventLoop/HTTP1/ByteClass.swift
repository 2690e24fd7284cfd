/// RFC 9110 character classes as one 256-entry table, so the parser's inner loops test
/// a bit instead of a chain of ranges.
enum ByteClass {
    /// tchar: what a method, a header name or a transfer coding may consist of.
    static let token: UInt8 = 1
    /// field-vchar, SP and HTAB: what a field value may contain (obs-text included).
    static let fieldValue: UInt8 = 2
    /// VCHAR: what a request-target may contain (no spaces, controls or non-ASCII).
    static let target: UInt8 = 4
    static let hexDigit: UInt8 = 8

    static let table: [UInt8] = (0..<256).map { byte -> UInt8 in
        let c = UInt8(byte)
        var bits: UInt8 = 0
        let isAlnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
        if isAlnum || Array("!#$%&'*+-.^_`|~".utf8).contains(c) { bits |= token }
        if (c >= 0x21 && c <= 0x7E) || c >= 0x80 || c == 0x20 || c == 0x09 { bits |= fieldValue }
        if c >= 0x21 && c <= 0x7E { bits |= target }
        if (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66) { bits |= hexDigit }
        return bits
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { c &- 0x41 < 26 ? c | 0x20 : c }

    /// `bytes` equals `lowercase` (ASCII) ignoring case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for k in 0..<bytes.count where lower(bytes[k]) != expected[k] { return false }
        return true
    }

}
