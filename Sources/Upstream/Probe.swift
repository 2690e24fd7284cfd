import HTTPCore
internal import CCurl
internal import CShims

/// One blocking GET with libcurl's easy interface, for `serializerd healthcheck` (no
/// loop, no daemon state): a task configured exactly as the session manager's.
public enum Probe {
    /// The status, or why no response came.
    /// `unixSocket`: connect to this Unix socket instead of the URL's host.
    public static func get(url: String, timeout: Double, unixSocket: String? = nil) -> Result<Int, UpstreamFailure> {
        SessionManager.globalInit()
        guard let easy = SessionManager.newHandle() else {
            return .failure(.unavailable(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed"))
        }
        let request = UpstreamRequest(url: url, method: "GET", headers: HeaderFields(), body: [], timeout: timeout, connectTimeout: timeout,
                                      followRedirects: 0, maxResponseBytes: 1 << 20)
        let transfer = Transfer(easy: easy, limit: request.maxResponseBytes) { _ in }
        defer { transfer.release() }
        do throws(CurlError) {
            try SessionManager.configure(transfer, request)
            if let unixSocket { try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_UNIX_SOCKET_PATH, unixSocket), "CURLOPT_UNIX_SOCKET_PATH") }
        } catch {
            return .failure(.unavailable(code: error.code, message: error.description))
        }
        return SessionManager.outcome(transfer, curl_easy_perform(easy)).map(\.status)
    }
}

/// Blocking POSTs on one easy handle that keeps its connection between them: the trace
/// exporter's, on its own thread (never a worker's loop). Only that thread may use it.
public final class BlockingPoster: @unchecked Sendable {
    private var easy: UnsafeMutableRawPointer?

    public init() { SessionManager.globalInit() }

    deinit { if let easy { curl_easy_cleanup(easy) } }

    /// The status of one POST of `body` as `contentType` to `url`, or why none came.
    /// `timeout` bounds the whole exchange, connecting included. The body is sent from
    /// where it is (the call blocks until the exchange ends): a batch is not copied.
    public func post(_ body: UnsafeBufferPointer<UInt8>, contentType: String, to url: String,
                     timeout: Double) -> Result<Int, UpstreamFailure> {
        if easy == nil { easy = SessionManager.newHandle() }
        guard let easy else { return .failure(.unavailable(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed")) }
        let request = UpstreamRequest(url: url, method: "POST", headers: HeaderFields([("Content-Type", contentType)]), body: [],
                                      timeout: timeout, connectTimeout: min(timeout, 2), followRedirects: 0, maxResponseBytes: 1 << 20)
        let transfer = Transfer(easy: easy, limit: request.maxResponseBytes) { _ in }
        defer { transfer.releaseKeepingHandle() }
        do throws(CurlError) {
            try SessionManager.configure(transfer, request)
            try Curl.check(cshim_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
            let bytes = UnsafeMutableRawPointer(mutating: body.baseAddress ?? UnsafePointer(("" as StaticString).utf8Start))
            try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, bytes), "CURLOPT_POSTFIELDS")
        } catch {
            return .failure(.unavailable(code: error.code, message: error.description))
        }
        return SessionManager.outcome(transfer, curl_easy_perform(easy)).map(\.status)
    }
}
