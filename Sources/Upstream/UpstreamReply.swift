/// The upstream's final response (after any redirects), body decoded.
public struct UpstreamReply: Sendable {
    public var status: Int
    public var headers: UpstreamHeaders
    public var contentType: String?
    public var body: [UInt8]
    public var url: String
    /// The HTTP version the answer came in (`1.0`, `1.1`, `2`, `3`); nil when no network
    /// exchange made it (a tape's or a mock's answer).
    public var httpVersion: String?

    public init(status: Int, headers: UpstreamHeaders, contentType: String?, body: [UInt8], url: String, httpVersion: String? = nil) {
        self.httpVersion = httpVersion
        self.status = status
        self.headers = headers
        self.contentType = contentType
        self.body = body
        self.url = url
    }
}
