/// `name=value; name; …`: the syntax of `Serializerd-Fault`, `Serializerd-Chaos` and the
/// route's `chaos` entries. Names are case-insensitive; values are kept as written.
public enum Directives {
    /// More directives than this in one header is an error, not a longer loop.
    public static let maxCount = 32

    public static func parse(_ text: String) throws(NetworkSyntaxError) -> [(name: String, value: String?)] {
        var result: [(name: String, value: String?)] = []
        for part in text.split(separator: ";", omittingEmptySubsequences: false) {
            let item = part.trimmingSpaces
            if item.isEmpty { continue }
            guard result.count < maxCount else { throw NetworkSyntaxError("more than \(maxCount) directives") }
            let name: Substring, value: Substring?
            if let eq = item.firstIndex(of: "=") {
                name = item[..<eq].trimmingSpaces
                value = item[item.index(after: eq)...].trimmingSpaces
            } else {
                name = item
                value = nil
            }
            guard !name.isEmpty, name.utf8.allSatisfy(isNameByte)
            else { throw NetworkSyntaxError("'\(name.prefix(40))' is not a directive name") }
            result.append((name.lowercased(), value.map(String.init)))
        }
        return result
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A)
    }
}
