/// Why a request could not be read (RFC 9112). Each case maps to one reply in
/// DESIGN §3: malformed → 400 `bad-request`, head → 431, body → 413; the connection
/// is closed after any of them, since its framing can no longer be trusted.
public enum HTTPParseError: Error, Equatable, Sendable {
    /// The request line, a header field or the body framing breaks RFC 9112.
    case malformed(String)
    /// The request line and header fields exceed the head limit (bytes, line ends included).
    case headTooLarge(limit: Int)
    /// The body exceeds the body limit (declared by Content-Length, or as chunks arrive).
    case bodyTooLarge(limit: Int)
}

extension HTTPParseError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .malformed(let detail): detail
        case .headTooLarge(let limit): "the request head is larger than \(limit) bytes"
        case .bodyTooLarge(let limit): "the request body is larger than \(limit) bytes"
        }
    }
}
