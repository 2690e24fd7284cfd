internal import CCurl
internal import CShims
#if canImport(Glibc)
import Glibc
#endif

enum Curl {
    /// For `curl_easy_*` results.
    @inline(__always)
    static func check(_ code: CURLcode, _ call: StaticString, function: StaticString = #function) throws(CurlError) {
        guard code != CURLE_OK else { return }
        throw CurlError(code: Int(code.rawValue), message: String(cString: curl_easy_strerror(code)), call: "\(call)",
                        function: "\(function)")
    }

    /// For `curl_multi_*` results.
    @inline(__always)
    static func check(_ code: CURLMcode, _ call: StaticString, function: StaticString = #function) throws(CurlError) {
        guard code != CURLM_OK else { return }
        throw CurlError(code: Int(code.rawValue), message: String(cString: curl_multi_strerror(code)), call: "\(call)",
                        function: "\(function)")
    }
}
