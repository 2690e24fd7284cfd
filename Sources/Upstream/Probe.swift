internal import CCurl

/// One blocking GET with libcurl's easy interface, for `serializerd healthcheck` (no
/// loop, no daemon state): a task configured exactly as the session manager's.
public enum Probe {
    /// The status, or why no response came.
    public static func get(url: String, timeout: Double) -> Result<Int, UpstreamFailure> {
        SessionManager.globalInit()
        guard let easy = SessionManager.newHandle() else {
            return .failure(.unavailable(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed"))
        }
        let request = UpstreamRequest(url: url, method: "GET", headers: HeaderLines(), body: [], timeout: timeout, connectTimeout: timeout,
                                      followRedirects: 0, maxResponseBytes: 1 << 20)
        let transfer = Transfer(easy: easy, limit: request.maxResponseBytes) { _ in }
        defer { transfer.release() }
        SessionManager.configure(transfer, request)
        return SessionManager.outcome(transfer, curl_easy_perform(easy)).map(\.status)
    }
}
