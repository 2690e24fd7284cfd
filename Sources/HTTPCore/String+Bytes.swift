#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// The text before the first `byte` (all of it when there is none), searched in the
    /// contiguous UTF-8 rather than index by index.
    public func prefix(upToByte byte: UInt8) -> String {
        var text = self
        return text.withUTF8 { bytes -> String? in
            guard let base = bytes.baseAddress, let found = memchr(base, Int32(byte), bytes.count) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: base, count: UnsafeRawPointer(found) - UnsafeRawPointer(base)), as: UTF8.self)
        } ?? self
    }
}

extension String {
    /// Equal to `other` ignoring ASCII case (header names), compared byte by byte without
    /// lowercasing either.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            for k in 0..<a.count where a[k] != b[k] {
                let x = a[k], y = b[k]
                if (x &- 0x41 < 26 ? x | 0x20 : x) != (y &- 0x41 < 26 ? y | 0x20 : y) { return false }
            }
            return true
        }
        if let result = utf8.withContiguousStorageIfAvailable({ a in other.utf8.withContiguousStorageIfAvailable { b in same(a, b) } }),
           let result { return result }
        var a = self, b = other
        return a.withUTF8 { a in b.withUTF8 { b in same(a, b) } }
    }
}
