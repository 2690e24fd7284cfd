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

    /// Methods that may be sent again when their reused upstream connection dies before
    /// any answer (DESIGN §11); any other request may be, too, when it carries
    /// `Idempotency-Key`.
    @inlinable
    public static func isIdempotent(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "PUT", "DELETE": true
        default: false
        }
    }
}
