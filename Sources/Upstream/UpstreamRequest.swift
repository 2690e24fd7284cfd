/// One request for the upstream, fully resolved by the proxy.
public struct UpstreamRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: [(String, String)]
    public var body: [UInt8]
    public var timeout: Double
    public var connectTimeout: Double
    public var followRedirects: Int
    public var maxResponseBytes: Int

    public init(url: String, method: String, headers: [(String, String)], body: [UInt8], timeout: Double,
                connectTimeout: Double, followRedirects: Int, maxResponseBytes: Int) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.maxResponseBytes = maxResponseBytes
    }
}

/// The upstream's final response (after any redirects), body decoded.
public struct UpstreamReply: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var contentType: String?
    public var body: [UInt8]
    public var url: String
}

/// Why no response came back.
public enum UpstreamFailure: Error, Sendable, Equatable {
    /// Refused, reset, DNS, TLS…: libcurl's CURLcode and its message.
    case unavailable(code: Int, message: String)
    case timeout
    case bodyTooLarge(limit: Int)
    /// The transfer was abandoned (shutdown).
    case aborted
}

extension UpstreamFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unavailable(_, let message): message
        case .timeout: "no complete response within the timeout"
        case .bodyTooLarge(let limit): "the response is larger than \(limit) bytes"
        case .aborted: "the transfer was abandoned"
        }
    }
}
