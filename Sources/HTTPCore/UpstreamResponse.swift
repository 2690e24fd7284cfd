/// An upstream's final response (after any redirects), body decoded from any
/// Content-Encoding: what the session manager delivers, what tapes and mocks stand in
/// for, and what a response serializer reads (AF's `(NSHTTPURLResponse, NSData)` pair).
public struct UpstreamResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// The header lines as received, parsed only when asked.
    public var headers: HeaderFields
    /// The raw `Content-Type` header value; nil when the upstream sent none.
    public var contentType: String?
    /// The whole body.
    public var body: [UInt8]
    /// The URL that answered; empty for an answer made without one (`transcode`).
    public var url: String
    /// The HTTP version the answer came in (`1.0`, `1.1`, `2`, `3`); nil when no network
    /// exchange made it (a tape's or a mock's answer).
    public var httpVersion: String?

    public init(status: Int, headers: HeaderFields = HeaderFields(), contentType: String?, body: [UInt8], url: String = "",
                httpVersion: String? = nil) {
        self.status = status
        self.headers = headers
        self.contentType = contentType
        self.body = body
        self.url = url
        self.httpVersion = httpVersion
    }

    /// The parsed media type; nil when missing or malformed (AF's nil MIMEType).
    public var mediaType: MediaType? { contentType.flatMap(MediaType.init) }
}
