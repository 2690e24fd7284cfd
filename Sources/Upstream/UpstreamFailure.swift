/// Why no response came back.
public enum UpstreamFailure: Error, Sendable, Equatable {
    /// Refused, reset, DNS, TLS…: libcurl's CURLcode and its message.
    case unavailable(code: Int, message: String)
    case timeout
    case bodyTooLarge(limit: Int)
    /// The transfer was abandoned (shutdown).
    case aborted
    /// The process's buffer budget (`limits.max_buffered_bytes`) had no room for the body.
    case overloaded
}

extension UpstreamFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unavailable(_, let message): message
        case .timeout: "no complete response within the timeout"
        case .bodyTooLarge(let limit): "the response is larger than \(limit) bytes"
        case .aborted: "the transfer was abandoned"
        case .overloaded: "the server's buffer budget has no room for this response"
        }
    }
}
