import HTTPCore
import Tracing

/// One request for the upstream, fully resolved by the proxy.
public struct UpstreamRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: HeaderFields
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
    /// An answer that streams may be of any size (`stream.bytes`): libcurl is not told the
    /// cap, which the body read still keeps for an answer that is buffered.
    public var uncappedStreams = false
    /// The W3C `traceparent` this attempt carries (DESIGN §12): written as its header lines
    /// are handed to libcurl, so that an attempt's own traceparent copies no fields.
    public var traceparent: TraceParent?

    /// One object: a request carries it through to its transfer for one retain.
    public final class Tag: Sendable {
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

    /// Whether the request may be sent again (DESIGN §11): an idempotent method, or any
    /// request carrying `Idempotency-Key`.
    public var isIdempotent: Bool {
        HTTPMethod.isIdempotent(method) || headers.contains(any: Self.idempotencyKey)
    }

    static let idempotencyKey = HeaderNames(["idempotency-key"])

    /// The transfer-handle pool this request's handle comes from: one per TLS policy, jar
    /// and HTTP version setting, each set once on the handle; nil for the plain pool
    /// (libcurl's defaults: HTTP/1.1 over cleartext, HTTP/2 over TLS when offered).
    var profile: String? {
        let https = url.hasPrefix("https:")
        guard tls != nil || cookies != nil || httpVersion != .auto || https else { return nil }
        return (tls?.key ?? "") + "|" + (cookies?.id ?? "") + "|" + httpVersion.rawValue + (https ? "s" : "")
    }

    /// A route's `http_version` (DESIGN §2).
    public enum HTTPVersionSetting: String, Sendable, CaseIterable {
        /// HTTP/2 over TLS when the upstream offers it (ALPN), else HTTP/1.1.
        case auto
        case http1_1 = "1.1"
        /// HTTP/2: over TLS by ALPN, over cleartext with prior knowledge (h2c).
        case http2 = "2"
    }

    public init(url: String, method: String, headers: HeaderFields, body: [UInt8], timeout: Double,
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
