import HTTPCore

/// A response's status line and header fields, written as bytes in one buffer.
struct ReplyHead {
    private(set) var bytes: [UInt8]

    init(status: Int, capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status)
        bytes.append(0x20)
        bytes.append(contentsOf: HTTPReason.phrase(status).utf8)
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// One field. CR, LF and NUL never reach the wire: a value carrying them (from an
    /// upstream, say) would split the response, so they become spaces.
    mutating func add(_ name: String, _ value: String) {
        var name = name, value = value
        name.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(0x3A)
        bytes.append(0x20)
        value.withUTF8 { value in
            let start = bytes.count
            bytes.append(contentsOf: value)
            // Rare: only then is the value walked a second time.
            if Self.hasControl(value) {
                for k in start..<bytes.count where bytes[k] == 0x0D || bytes[k] == 0x0A || bytes[k] == 0 { bytes[k] = 0x20 }
            }
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
    }

    /// Whether any byte is below 0x20, eight at a time: a byte under 0x20 is the one
    /// whose subtraction borrows into its high bit while its own high bit is clear.
    static func hasControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return false }
        var k = 0
        while k + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            k += 8
        }
        while k < bytes.count {
            if bytes[k] < 0x20 { return true }
            k += 1
        }
        return false
    }

    /// The head with `body` after it, in the one buffer (the head is left empty).
    mutating func take(appending body: [UInt8]) -> [UInt8] {
        bytes.append(contentsOf: body)
        defer { bytes = [] }
        return bytes
    }

    mutating func addContentLength(_ length: Int) {
        bytes.append(contentsOf: "Content-Length: ".utf8)
        appendDecimal(length)
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    mutating func end() { bytes.append(contentsOf: [0x0D, 0x0A]) }

    private mutating func appendDecimal(_ value: Int) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = max(0, value), n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[19 - n] = UInt8(0x30 + v % 10)
                v /= 10
                n += 1
            } while v > 0
            bytes.append(contentsOf: d[(20 - n)...])
        }
    }
}
