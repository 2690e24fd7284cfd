/// What the session manager hands to a response serializer: AF's
/// `(NSHTTPURLResponse, NSData)` pair, reduced to what serializers read.
public struct UpstreamResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The raw `Content-Type` header value; nil when the upstream sent none.
    public var contentType: String?
    /// The whole body, already decoded from any Content-Encoding.
    public var body: [UInt8]

    public init(status: Int, contentType: String?, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    /// The parsed media type; nil when missing or malformed (AF's nil MIMEType).
    public var mediaType: MediaType? { contentType.flatMap(MediaType.init) }
}
