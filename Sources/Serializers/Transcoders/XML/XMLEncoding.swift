#if canImport(Glibc)
import Glibc
#endif

/// Decides an XML body's encoding before anything reads it, so the attribute pre-scan and
/// libxml2 see the same characters. The scan counts `<`, `=`, `>` and quotes as bytes,
/// which is sound only when every byte below 0x80 is that ASCII character; in UTF-16 or
/// UTF-32, EBCDIC, UTF-7 or ISO-2022 a character can hold those bytes (`㸀` is `00 3E` in
/// UTF-16LE), so an element of 10^5 attributes named with it passed the scan and libxml2's
/// quadratic check ran for seconds. A body in any encoding but UTF-8 is therefore converted
/// to UTF-8 first (iconv, as libxml2 itself does), and libxml2 always parses UTF-8,
/// ignoring the declaration (`XML_PARSE_IGNORE_ENC`).
enum XMLEncoding {
    /// A UTF-8 copy of `bytes` when they need one, nil when they are safe as they are.
    static func utf8Copy(of bytes: [UInt8]) throws(TranscodeError) -> [UInt8]? {
        guard let (source, skip) = try sourceEncoding(bytes) else { return nil }
        return try convert(bytes, from: source, skipping: skip)
    }

    /// The encoding to convert from and the byte-order mark to skip, or nil when none is needed.
    static func sourceEncoding(_ b: [UInt8]) throws(TranscodeError) -> (String, Int)? {
        func starts(_ prefix: [UInt8]) -> Bool { b.starts(with: prefix) }
        // Byte-order marks and the first characters of `<?xml`, as XML 1.0 appendix F detects them.
        if starts([0x00, 0x00, 0xFE, 0xFF]) { return ("UTF-32BE", 4) }
        if starts([0xFF, 0xFE, 0x00, 0x00]) { return ("UTF-32LE", 4) }
        if starts([0xFE, 0xFF]) { return ("UTF-16BE", 2) }
        if starts([0xFF, 0xFE]) { return ("UTF-16LE", 2) }
        if starts([0x00, 0x00, 0x00, 0x3C]) { return ("UTF-32BE", 0) }
        if starts([0x3C, 0x00, 0x00, 0x00]) { return ("UTF-32LE", 0) }
        if starts([0x00, 0x3C]) { return ("UTF-16BE", 0) }
        if starts([0x3C, 0x00]) { return ("UTF-16LE", 0) }
        if starts([0x4C, 0x6F, 0xA7, 0x94]) {
            // `<?xm` in EBCDIC: the declaration (read in code page 037, whose ASCII letters
            // and punctuation the EBCDIC variants share) names the variant.
            let prolog = try convert(Array(b.prefix(256)), from: "IBM037", skipping: 0, partial: true)
            return (declaredEncoding(prolog[...]) ?? "IBM037", 0)
        }
        let bom = starts([0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let declared = declaredEncoding(b[bom...]) else { return nil }
        let name = String(declared.uppercased().filter { $0 != "-" && $0 != "_" })
        // A wide encoding declared in single bytes is a mislabel: the bytes are read as UTF-8.
        let wide = ["UTF16", "UTF32", "UCS2", "UCS4", "UNICODE"].contains { name.hasPrefix($0) }
        return ["UTF8", "USASCII", "ASCII"].contains(name) || wide ? nil : (declared, bom)
    }

    /// `encoding="…"` from the XML declaration at the start, if there is one. The
    /// declaration ends at the first `>` (it cannot hold one), so this is linear.
    static func declaredEncoding(_ b: ArraySlice<UInt8>) -> String? {
        guard b.starts(with: "<?xml".utf8), let end = b.firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let key = Array("encoding".utf8)
        var i = b.startIndex + 5
        while i + key.count <= end {
            if b[i..<i + key.count].elementsEqual(key) {
                var j = i + key.count
                while j < end && (b[j] == 0x20 || b[j] == 0x09 || b[j] == 0x0A || b[j] == 0x0D || b[j] == 0x3D) { j += 1 }
                guard j < end, b[j] == 0x22 || b[j] == 0x27 else { return nil }
                let quote = b[j]
                guard let close = b[(j + 1)..<end].firstIndex(of: quote) else { return nil }
                return String(decoding: b[(j + 1)..<close], as: UTF8.self)
            }
            i += 1
        }
        return nil
    }

    /// `bytes` from `encoding` to UTF-8 with iconv, in one call into a buffer of 3 bytes per
    /// input byte (a character of a single-byte code page is at most 3 UTF-8 bytes). With
    /// `partial`, a truncated last character is not an error (a prefix is being read).
    static func convert(_ bytes: [UInt8], from encoding: String, skipping skip: Int,
                        partial: Bool = false) throws(TranscodeError) -> [UInt8] {
        // The name comes from the body: only a plain charset name reaches iconv.
        let plain = encoding.utf8.count <= 40 && encoding.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E || $0 == 0x3A
        }
        guard plain, let cd = iconv_open("UTF-8", encoding), cd != iconv_t(bitPattern: -1) else {
            throw TranscodeError("XML encoding '\(encoding)' is not supported")
        }
        defer { iconv_close(cd) }
        var out = [UInt8](repeating: 0, count: 3 * (bytes.count - skip) + 16)
        var failure: Int32 = 0
        var stoppedAt = 0
        let written = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output -> Int in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: input.baseAddress! + skip)
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = input.count - skip
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(output.baseAddress!)
                    .assumingMemoryBound(to: CChar.self)
                var outLeft = output.count
                if iconv(cd, &inPointer, &inLeft, &outPointer, &outLeft) == -1 { failure = errno }
                stoppedAt = input.count - inLeft
                return output.count - outLeft
            }
        }
        switch failure {
        case 0: break
        case EINVAL where partial: break
        case E2BIG: throw TranscodeError("XML in \(encoding) converts to more than 3 bytes of UTF-8 per byte")
        default: throw TranscodeError("XML is not valid \(encoding) at byte \(stoppedAt)")
        }
        out.removeLast(out.count - written)
        return out
    }
}
