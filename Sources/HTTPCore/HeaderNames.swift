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
    public mutating func addConnectionOptions(_ value: UnsafeBufferPointer<UInt8>) {
        // Index arithmetic on the bytes: the generic split/trim chain this replaces cost
        // ~11 k instructions per `Connection: keep-alive`.
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start, last = end
            while first < last && (value[first] == 0x20 || value[first] == 0x09) { first += 1 }
            while last > first && (value[last - 1] == 0x20 || value[last - 1] == 0x09) { last -= 1 }
            let token = UnsafeBufferPointer(rebasing: value[first..<last])
            if !token.isEmpty && !HeaderNames.isUsualConnectionToken(token) { names.append(token.map(HeaderNames.lower)) }
            start = end + 1
        }
    }

    static func isUsualConnectionToken(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        equalsIgnoringCase(token, "keep-alive") || equalsIgnoringCase(token, "close")
    }

    /// `name` is `lowercase` (lowercase ASCII), ignoring case.
    static func equalsIgnoringCase(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        name.count == lowercase.utf8CodeUnitCount && hasPrefix(name, lowercase)
    }

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
