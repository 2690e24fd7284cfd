/// The upstream's final response (after any redirects), body decoded.
public struct UpstreamReply: Sendable {
    public var status: Int
    public var headers: UpstreamHeaders
    public var contentType: String?
    public var body: [UInt8]
    public var url: String

    public init(status: Int, headers: UpstreamHeaders, contentType: String?, body: [UInt8], url: String) {
        self.status = status
        self.headers = headers
        self.contentType = contentType
        self.body = body
        self.url = url
    }
}
