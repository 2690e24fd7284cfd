internal import CCurl
internal import CShims
#if canImport(Glibc)
import Glibc
#endif

/// A libcurl call that did not succeed: its code, libcurl's own message, and which
/// option or call in which function (STYLE habit 6: every return code through one checker).
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let code: Int
    public let message: String
    public let call: String
    public let function: String

    public var description: String { "\(call) in \(function): \(message) (\(code))" }
}

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

/// What curl asks of one socket (CURLMOPT_SOCKETFUNCTION's `what`), as a value the
/// session manager maps to a watch or a removal (STYLE habit 9).
enum SocketInterest: Equatable {
    case watch(read: Bool, write: Bool)
    case forget

    init(_ what: Int32) {
        switch what {
        case CURL_POLL_REMOVE: self = .forget
        case CURL_POLL_IN: self = .watch(read: true, write: false)
        case CURL_POLL_OUT: self = .watch(read: false, write: true)
        case CURL_POLL_INOUT: self = .watch(read: true, write: true)
        default: self = .watch(read: false, write: false)   // CURL_POLL_NONE
        }
    }
}
