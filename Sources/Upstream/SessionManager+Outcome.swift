internal import CCurl
internal import CShims
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// What a finished transfer comes to: its answer or its failure, read from libcurl.
extension SessionManager {
    /// The transfer failed on a connection it reused, before a byte of the answer came:
    /// the upstream closed or reset it (its keep-alive timeout met our reuse). libcurl
    /// sends the request again itself in that case, but only up to five times in a
    /// handle's life, after which the race would reach the client as a 502.
    static func diedUnanswered(_ t: Transfer, _ code: CURLcode) -> Bool {
        guard code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING, !t.overBudget, !t.overLimit
        else { return false }
        var connects = 0, headerBytes = 0
        guard cshim_easy_getinfo_long(t.easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK,
              cshim_easy_getinfo_long(t.easy, CURLINFO_HEADER_SIZE, &headerBytes) == CURLE_OK else { return false }
        return connects == 0 && headerBytes == 0 && t.body.isEmpty
    }

    static func outcome(_ t: Transfer, _ code: CURLcode) -> Result<UpstreamResponse, UpstreamFailure> {
        if t.overBudget { return .failure(.overloaded) }
        if t.stopped { return .failure(.aborted) }
        if t.overLimit || code == CURLE_FILESIZE_EXCEEDED { return .failure(.bodyTooLarge(limit: t.limit)) }
        if code == CURLE_OPERATION_TIMEDOUT { return .failure(.timeout) }
        guard code == CURLE_OK else {
            let message = t.errorMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : t.errorMessage
            return .failure(.unavailable(code: Int(code.rawValue), message: TLSPolicy.cause(of: code).map { $0 + ": " + message } ?? message))
        }
        var status = 0
        var typePointer: UnsafePointer<CChar>?
        var urlPointer: UnsafePointer<CChar>?
        var version = 0
        do throws(CurlError) {
            try Curl.check(cshim_easy_getinfo_long(t.easy, CURLINFO_HTTP_VERSION, &version), "CURLINFO_HTTP_VERSION")
            try Curl.check(cshim_easy_getinfo_long(t.easy, CURLINFO_RESPONSE_CODE, &status), "CURLINFO_RESPONSE_CODE")
            try Curl.check(cshim_easy_getinfo_string(t.easy, CURLINFO_CONTENT_TYPE, &typePointer), "CURLINFO_CONTENT_TYPE")
            try Curl.check(cshim_easy_getinfo_string(t.easy, CURLINFO_EFFECTIVE_URL, &urlPointer), "CURLINFO_EFFECTIVE_URL")
        } catch {
            return .failure(.unavailable(code: error.code, message: error.description))
        }
        return .success(UpstreamResponse(status: status, headers: t.headers, contentType: typePointer.map { String(cString: $0) },
                                      body: t.body, url: urlPointer.map { Self.string($0, reusing: t.url) } ?? "", httpVersion: Self.versionName(version)))
    }

    /// `text` as a String: `known` itself when it holds the same bytes (no copy made).
    static func string(_ text: UnsafePointer<CChar>, reusing known: String) -> String {
        var known = known
        let same = known.withUTF8 { bytes in
            strlen(text) == bytes.count && (bytes.isEmpty || memcmp(text, bytes.baseAddress!, bytes.count) == 0)
        }
        return same ? known : String(cString: text)
    }

    /// Whether this libcurl can reuse an h2c prior-knowledge connection (8.0 and later).
    static let reusesPriorKnowledge = curl_version_info(CURLVERSION_ELEVENTH).pointee.version_num >= 0x08_00_00

    /// CURLINFO_HTTP_VERSION as the metrics label and the event say it.
    static func versionName(_ value: Int) -> String? {
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: nil
        }
    }
}
