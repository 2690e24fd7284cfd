import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Request header lines as libcurl takes them (`Name: value`, each NUL-terminated), in
/// one buffer: built from the client's header bytes without a String per header.
public struct HeaderLines: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        if bytes.capacity == 0 { bytes.reserveCapacity(512) }
        bytes.append(contentsOf: name)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: value)
        bytes.append(0)
    }

    public mutating func append(_ name: StaticString, value: UnsafeBufferPointer<UInt8>) {
        name.withUTF8Buffer { append(name: $0, value: value) }
    }

    public mutating func append(_ name: String, _ value: String) {
        var name = name, value = value
        name.withUTF8 { name in value.withUTF8 { append(name: name, value: $0) } }
    }

    /// Each field's name and value (leading whitespace dropped), in order, as bytes.
    public func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return }
            var start = 0
            while start < all.count {
                let end = memchr(base + start, 0, all.count - start).map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? all.count
                let colon = memchr(base + start, Int32(UInt8(ascii: ":")), end - start)
                    .map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? end
                if colon < end {
                    var value = colon + 1
                    while value < end && (all[value] == 0x20 || all[value] == 0x09) { value += 1 }
                    body(UnsafeBufferPointer(rebasing: all[start..<colon]), UnsafeBufferPointer(rebasing: all[value..<end]))
                }
                start = end + 1
            }
        }
    }

    static let idempotencyKey = HeaderNames(["idempotency-key"])

    /// Every field as (name, value), in order (what a tape records).
    public var fields: [(String, String)] {
        bytes.split(separator: 0).compactMap { line in
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            var value = line[(colon + 1)...]
            while value.first == 0x20 || value.first == 0x09 { value = value.dropFirst() }
            return (String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
    }
}
