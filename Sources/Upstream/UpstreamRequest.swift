import HTTPCore

/// One request for the upstream, fully resolved by the proxy.
public struct UpstreamRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: HeaderLines
    public var body: [UInt8]
    public var timeout: Double
    public var connectTimeout: Double
    public var followRedirects: Int
    public var maxResponseBytes: Int
    /// The route's security policy; nil: libcurl's defaults (system roots, verified).
    public var tls: TLSPolicy?

    public init(url: String, method: String, headers: HeaderLines, body: [UInt8], timeout: Double,
                connectTimeout: Double, followRedirects: Int, maxResponseBytes: Int, tls: TLSPolicy? = nil) {
        self.tls = tls
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
