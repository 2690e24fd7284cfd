/// The upstream's final response (after any redirects), body decoded.
public struct UpstreamReply: Sendable {
    public var status: Int
    public var headers: UpstreamHeaders
    public var contentType: String?
    public var body: [UInt8]
    public var url: String
}
