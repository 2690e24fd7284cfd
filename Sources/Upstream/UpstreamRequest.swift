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
    public var httpVersion: HTTPVersionSetting
    /// `cookies: jar`: the route's cookie jar; nil: cookies pass through as headers.
    public var cookies: CookieJar?
    /// Whose transfer it is, for progress and `/-/inflight`.
    public var tag: Tag?

    public struct Tag: Sendable {
        public let requestID: String
        public let route: String
        public let method: String
        public let path: String

        public init(requestID: String, route: String, method: String, path: String) {
            self.requestID = requestID
            self.route = route
            self.method = method
            self.path = path
        }
    }

    /// The transfer-handle pool this request's handle comes from: one per TLS policy and
    /// jar, nil for neither.
    var profile: String? {
        guard tls != nil || cookies != nil else { return nil }
        return (tls?.key ?? "") + "|" + (cookies?.id ?? "")
    }

    /// A route's `http_version` (DESIGN §2).
    public enum HTTPVersionSetting: String, Sendable, CaseIterable {
        /// HTTP/2 over TLS when the upstream offers it (ALPN), else HTTP/1.1.
        case auto
        case http1_1 = "1.1"
        /// HTTP/2: over TLS by ALPN, over cleartext with prior knowledge (h2c).
        case http2 = "2"
    }

    public init(url: String, method: String, headers: HeaderLines, body: [UInt8], timeout: Double,
                connectTimeout: Double, followRedirects: Int, maxResponseBytes: Int, tls: TLSPolicy? = nil,
                httpVersion: HTTPVersionSetting = .auto, cookies: CookieJar? = nil, tag: Tag? = nil) {
        self.cookies = cookies
        self.tag = tag
        self.tls = tls
        self.httpVersion = httpVersion
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
