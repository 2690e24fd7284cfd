/// A small set of header names, matched case-insensitively against the raw bytes of a
/// name, so a proxy can pick the few fields it forwards without a String per field.
public struct HeaderNames: Sendable {
    /// The names, lowercased ASCII, one after another; `ends[k]` is where name k stops.
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    /// Bit n set: some name is n bytes long (n < 64; bit 63 stands for every longer one).
    /// Most fields a request or a response carries are rejected by this one test.
    @usableFromInline var lengths: UInt64 = 0

    public init(_ names: [String]) {
        for name in names { add(name.lowercased().utf8) }
    }

    private mutating func add<Name: Collection>(_ name: Name) where Name.Element == UInt8 {
        bytes.append(contentsOf: name.lazy.map(HeaderNames.lower))
        ends.append(bytes.count)
        lengths |= Self.lengthBit(name.count)
    }

    @inlinable static func lengthBit(_ count: Int) -> UInt64 { 1 << UInt64(min(count, 63)) }

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
            if !token.isEmpty && !HeaderNames.isUsualConnectionToken(token) { add(token) }
            start = end + 1
        }
    }

    static func isUsualConnectionToken(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        equalsIgnoringCase(token, "keep-alive") || equalsIgnoringCase(token, "close")
    }

    /// `name` is `lowercase` (lowercase ASCII), ignoring case.
    @inlinable public static func equalsIgnoringCase(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        name.count == lowercase.utf8CodeUnitCount && hasPrefix(name, lowercase)
    }

    /// `name` is `Connection`, ignoring case, without a set to look in.
    @inlinable public static func isConnection(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.count == 10 && lower(name[0]) == UInt8(ascii: "c") && equalsIgnoringCase(name, "connection")
    }

    /// No name at all (a Connection header listing only `keep-alive` or `close`).
    public var isEmpty: Bool { ends.isEmpty }

    /// Inlined where it is called: most names are refused by their length alone.
    @inlinable public func contains(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        lengths & Self.lengthBit(name.count) != 0 && holds(name)
    }

    @usableFromInline func holds(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for end in ends {
                defer { start = end }
                guard end - start == name.count else { continue }
                var k = 0
                while k < name.count && HeaderNames.lower(name[k]) == all[start + k] { k += 1 }
                if k == name.count { return true }
            }
            return false
        }
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

    @inlinable static func lower(_ c: UInt8) -> UInt8 { c &- 0x41 < 26 ? c | 0x20 : c }
}
