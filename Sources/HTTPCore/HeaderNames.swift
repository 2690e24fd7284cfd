/// A small set of header names, matched case-insensitively against the raw bytes of a
/// name, so a proxy can pick the few fields it forwards without a String per field.
public struct HeaderNames: Sendable {
    /// Lowercased ASCII.
    private var names: [[UInt8]]

    public init(_ names: [String]) {
        self.names = names.map { Array($0.lowercased().utf8) }
    }

    /// Adds the field names one `Connection` header value lists (RFC 9110 §7.6.1:
    /// comma-separated tokens, each naming a hop-by-hop field). `keep-alive` and `close`,
    /// the usual values, add nothing: no allocation for the common request.
    public mutating func addConnectionOptions(_ value: some Collection<UInt8>) {
        for token in value.split(separator: UInt8(ascii: ",")) {
            let trimmed = token.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            let name = trimmed.map(HeaderNames.lower)
            if !name.isEmpty && !HeaderNames.usualConnectionTokens.contains(name) { names.append(name) }
        }
    }

    static let usualConnectionTokens: [[UInt8]] = [Array("keep-alive".utf8), Array("close".utf8)]

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
