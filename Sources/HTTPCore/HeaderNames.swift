/// A small set of header names, matched case-insensitively against the raw bytes of a
/// name, so a proxy can pick the few fields it forwards without a String per field.
public struct HeaderNames: Sendable {
    /// Lowercased ASCII.
    private let names: [[UInt8]]

    public init(_ names: [String]) {
        self.names = names.map { Array($0.lowercased().utf8) }
    }

    /// The field names a `Connection` header lists (RFC 9110 §7.6.1: comma-separated
    /// tokens, each naming a hop-by-hop field), from each of its values.
    public init(connectionOptions values: [[UInt8]]) {
        var names: [[UInt8]] = []
        for value in values {
            for token in value.split(separator: UInt8(ascii: ",")) {
                let trimmed = token.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
                if !trimmed.isEmpty { names.append(trimmed.map(HeaderNames.lower)) }
            }
        }
        self.names = names
    }

    public var isEmpty: Bool { names.isEmpty }

    public static let connection = HeaderNames(["connection"])

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

    /// `name` starts with `prefix` (lowercase ASCII), ignoring case.
    public static func hasPrefix(_ name: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard name.count >= count else { return false }
        for k in 0..<count where lower(name[k]) != prefix.utf8Start[k] { return false }
        return true
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { c &- 0x41 < 26 ? c | 0x20 : c }
}
