/// A small set of header names, matched case-insensitively against the raw bytes of a
/// name, so a proxy can pick the few fields it forwards without a String per field.
public struct HeaderNames: Sendable {
    /// Lowercased ASCII.
    private let names: [[UInt8]]

    public init(_ names: [String]) {
        self.names = names.map { Array($0.lowercased().utf8) }
    }

    public func contains(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        for candidate in names where candidate.count == name.count {
            var k = 0
            while k < name.count && HeaderNames.lower(name[k]) == candidate[k] { k += 1 }
            if k == name.count { return true }
        }
        return false
    }

    public func contains(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { contains($0) }
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { c &- 0x41 < 26 ? c | 0x20 : c }
}

extension String {
    /// The text before the first `byte` (all of it when there is none), searched in the
    /// contiguous UTF-8 rather than index by index.
    public func prefix(upToByte byte: UInt8) -> String {
        var text = self
        return text.withUTF8 { bytes in
            bytes.firstIndex(of: byte).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self) }
        } ?? self
    }
}
