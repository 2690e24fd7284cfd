#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes text bodies by their declared charset (default UTF-8) into UTF-8 bytes.
/// Invalid input fails with the byte offset; nothing is ever replaced with U+FFFD.
enum TextDecoding {
    static func utf8(_ bytes: [UInt8], charset: String?) throws(TranscodeError) -> [UInt8] {
        let name = (charset ?? "utf-8").lowercased()
        switch name {
        case "utf-8", "utf8":
            if let bad = bytes.withUnsafeBufferPointer({ UTF8Validation.firstInvalidOffset($0) }) {
                throw TranscodeError("invalid UTF-8 at byte \(bad)")
            }
            return bytes
        case "us-ascii", "ascii":
            if let bad = bytes.firstIndex(where: { $0 >= 0x80 }) {
                throw TranscodeError("byte 0x\(String(bytes[bad], radix: 16)) at byte \(bad) is not US-ASCII")
            }
            return bytes
        case "iso-8859-1", "latin1", "iso8859-1", "l1":
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            for b in bytes {
                if b < 0x80 { out.append(b) } else { out.append(0xC0 | (b >> 6)); out.append(0x80 | (b & 0x3F)) }
            }
            return out
        default:
            return try iconvToUTF8(bytes, from: name)
        }
    }

    /// Any other charset glibc's iconv knows (windows-1252, shift_jis, utf-16, …).
    static func iconvToUTF8(_ bytes: [UInt8], from charset: String) throws(TranscodeError) -> [UInt8] {
        guard !charset.isEmpty, charset.utf8.allSatisfy({ isCharsetNameByte($0) }) else {
            throw TranscodeError("unsupported charset '\(charset)'")
        }
        let cd = iconv_open("UTF-8", charset)
        guard let cd, Int(bitPattern: cd) != -1 else { throw TranscodeError("unsupported charset '\(charset)'") }
        defer { iconv_close(cd) }
        var input = bytes
        var output = [UInt8](repeating: 0, count: bytes.count * 4 + 16)
        var written = 0
        let failure: TranscodeError? = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                var inPtr: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inBuf.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = inBuf.count
                var outPtr: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outBuf.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var outLeft = outBuf.count
                if inLeft > 0 && iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft) == -1 {
                    let offset = inBuf.count - inLeft
                    return TranscodeError("invalid \(charset) byte sequence at byte \(offset)")
                }
                if iconv(cd, nil, nil, &outPtr, &outLeft) == -1 {
                    return TranscodeError("truncated \(charset) byte sequence at the end of the body")
                }
                written = outBuf.count - outLeft
                return nil
            }
        }
        if let failure { throw failure }
        output.removeSubrange(written...)
        return output
    }

    static func isCharsetNameByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A)
            || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
    }
}
