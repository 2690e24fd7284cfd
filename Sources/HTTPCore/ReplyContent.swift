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
