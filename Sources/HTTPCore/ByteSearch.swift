#if canImport(Glibc)
import Glibc
#endif

/// Byte searches through libc's `memchr`, which reads a vector at a time: line and
/// record scans on stream paths run per event, where an element-by-element loop
/// costs several instructions a byte.
extension UnsafeRawBufferPointer {
    /// The index of the first `byte` in `start..<end`, or nil.
    @inlinable
    public func firstIndex(ofByte byte: UInt8, from start: Int, to end: Int) -> Int? {
        guard start < end, let base = baseAddress, let found = memchr(base + start, Int32(byte), end - start) else { return nil }
        return UnsafeRawPointer(found) - base
    }

    /// The index of the first CR or LF in `start..<end`, or `end`.
    @inlinable
    public func lineBreak(from start: Int, to end: Int) -> Int {
        let lf = firstIndex(ofByte: 0x0A, from: start, to: end) ?? end
        return firstIndex(ofByte: 0x0D, from: start, to: lf) ?? lf
    }
}

extension Array where Element == UInt8 {
    /// Whether `byte` occurs, searched with `memchr`.
    @inlinable
    public func containsByte(_ byte: UInt8) -> Bool {
        withUnsafeBytes { $0.firstIndex(ofByte: byte, from: 0, to: $0.count) != nil }
    }
}
