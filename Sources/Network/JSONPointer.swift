/// An RFC 6901 pointer as chaos operations use it; a `*` token stands for every member
/// or element.
public struct JSONPointer: Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public let tokens: [String]

    /// Deeper pointers are refused: no answer worth damaging nests further.
    public static let maxTokens = 64

    public init(_ text: String) throws(NetworkSyntaxError) {
        guard text.hasPrefix("/") else { throw NetworkSyntaxError("'\(text.prefix(40))' is not a JSON pointer (it starts with '/')") }
        var tokens: [String] = []
        for part in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard tokens.count < Self.maxTokens else { throw NetworkSyntaxError("a pointer of more than \(Self.maxTokens) tokens") }
            var token: [UInt8] = []
            var escaped = false
            for c in part {
                if escaped {
                    guard c == UInt8(ascii: "0") || c == UInt8(ascii: "1") else { throw NetworkSyntaxError("'~' in a pointer is followed by 0 or 1") }
                    token.append(c == UInt8(ascii: "0") ? UInt8(ascii: "~") : UInt8(ascii: "/"))
                    escaped = false
                } else if c == UInt8(ascii: "~") {
                    escaped = true
                } else {
                    token.append(c)
                }
            }
            guard !escaped else { throw NetworkSyntaxError("'~' in a pointer is followed by 0 or 1") }
            tokens.append(String(decoding: token, as: UTF8.self))
        }
        description = text
        self.tokens = tokens
    }
}
