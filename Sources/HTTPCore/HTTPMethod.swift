/// Request methods and the rules that depend on them, in one place.
public enum HTTPMethod {
    /// The methods a route without `methods` forwards are every method but these
    /// (DESIGN §2): CONNECT asks for a tunnel, TRACE echoes the request's credentials.
    @inlinable
    public static func isForwardedByDefault(_ method: String) -> Bool {
        method != "CONNECT" && method != "TRACE"
    }

    /// RFC 9110's methods and PATCH that a route without `methods` forwards, for an
    /// `Allow` header (other extension methods are forwarded too, but cannot be listed).
    public static let forwardedByDefault = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// The methods whose answers the cache stores and serves (RFC 9111 §2: GET, and HEAD
    /// answered from a GET's entry).
    @inlinable
    public static func isCacheable(_ method: String) -> Bool {
        method == "GET" || method == "HEAD"
    }

    /// Methods whose request carries content by definition: sent with `Content-Length`
    /// even when empty.
    public static func definesContent(_ method: String) -> Bool {
        method == "POST" || method == "PUT" || method == "PATCH"
    }
}

/// When a reply has no content (RFC 9110 §6.4.1): the one rule for the server and the
/// pipeline.
public enum ReplyContent {
    /// A reply to HEAD, or with status 1xx, 204, 205 or 304, carries no content.
    @inlinable
    public static func isAbsent(method: String, status: Int) -> Bool {
        status == 204 || status == 304 || status == 205 || status < 200 || method == "HEAD"
    }

    /// Whether the head says `Content-Length`. A 205 says `Content-Length: 0` (its
    /// framing, RFC 9110 §15.3.6); 1xx and 204 must not, and a 304's or a HEAD reply's
    /// would describe content not sent, so serializerd leaves it out.
    @inlinable
    public static func framesLength(method: String, status: Int) -> Bool {
        !isAbsent(method: method, status: status) || status == 205
    }
}
