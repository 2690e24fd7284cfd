internal import CCurl
internal import CShims
#if canImport(Glibc)
import Glibc
#endif

/// A request's header lines as libcurl holds them (CURLOPT_HTTPHEADER): owned here,
/// freed exactly once when the owner lets go (STYLE habit 8).
struct CurlHeaderList: ~Copyable {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?

    /// When a body is sent, `Expect:` first (no 100-continue round trip) and `Content-Type:`
    /// (a body sent without a type, or a POST without a body, must not get libcurl's default
    /// `application/x-www-form-urlencoded`; a type in `lines` is still sent); then each
    /// NUL-terminated line. (Without a body libcurl adds neither, and every entry is
    /// compared with a dozen names per request.)
    init(lines: HeaderLines, sendsBody: Bool) throws(CurlError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        var failed = false
        func append(_ line: UnsafePointer<CChar>) {
            guard !failed else { return }
            if let longer = curl_slist_append(list, line) { list = longer } else { failed = true }
        }
        if sendsBody {
            append("Expect:")
            append("Content-Type:")
        }
        lines.bytes.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { lines in
                var start = 0
                while start < lines.count {
                    append(lines.baseAddress! + start)
                    start += strlen(lines.baseAddress! + start) + 1
                }
            }
        }
        pointer = list
        if failed {
            throw CurlError(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_slist_append failed", call: "curl_slist_append",
                            function: "\(#function)")
        }
    }

    deinit { curl_slist_free_all(pointer) }
}
