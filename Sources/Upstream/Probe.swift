internal import CCurl
internal import CShims

/// One blocking GET with libcurl's easy interface, for `serializerd healthcheck` (no
/// loop, no daemon state). The body is capped: a health document is small.
public enum Probe {
    public struct Answer: Sendable {
        public let status: Int
        public let body: [UInt8]
    }

    /// The answer, or libcurl's message for why none came.
    public static func get(url: String, timeout: Double) -> Result<Answer, ProbeFailure> {
        SessionManager.globalInit()
        guard let easy = curl_easy_init() else { return .failure(ProbeFailure(message: "curl_easy_init failed")) }
        let transfer = Transfer(easy: easy, limit: 1 << 20) { _ in }
        defer { transfer.release() }
        let me = Unmanaged.passUnretained(transfer).toOpaque()
        cshim_easy_setopt_string(easy, CURLOPT_URL, url)
        cshim_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        cshim_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        cshim_easy_setopt_string(easy, CURLOPT_PROXY, "")
        cshim_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
        cshim_easy_setopt_write_function(easy, Transfer.write)
        cshim_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        cshim_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        let code = curl_easy_perform(easy)
        guard code == CURLE_OK else {
            let detail = transfer.errorMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.errorMessage
            return .failure(ProbeFailure(message: detail))
        }
        var status = 0
        cshim_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(Answer(status: status, body: transfer.body))
    }
}

public struct ProbeFailure: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
