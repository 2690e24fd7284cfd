import HTTPCore
import Tracing
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
    /// `application/x-www-form-urlencoded`; a type in `fields` is still sent); then each
    /// field. (Without a body libcurl adds neither, and every entry is compared with a
    /// dozen names per request.)
    init(fields: HeaderFields, sendsBody: Bool, traceparent: TraceParent? = nil) throws(CurlError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        var failed = false
        if sendsBody {
            for line in ["Expect:", "Content-Type:"] where !failed {
                if let longer = curl_slist_append(list, line) { list = longer } else { failed = true }
            }
        }
        // The lines copied once, each line's CR (or LF) made the NUL that ends it as the C
        // string libcurl copies.
        let count = fields.bytes.count
        let lines = UnsafeMutablePointer<CChar>.allocate(capacity: count + 1)
        defer { lines.deallocate() }
        fields.bytes.withUnsafeBytes { UnsafeMutableRawPointer(lines).copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(lines), byteCount: count) }
        lines[count] = 0
        var start = 0
        while start < count && !failed {
            let end = memchr(lines + start, 0x0A, count - start).map { $0.assumingMemoryBound(to: CChar.self) - lines } ?? count
            let stop = end > start && lines[end - 1] == 0x0D ? end - 1 : end
            lines[stop] = 0
            if stop > start {
                if let longer = curl_slist_append(list, lines + start) { list = longer } else { failed = true }
            }
            start = end + 1
        }
        if let traceparent, !failed {
            traceparent.withHeaderLine { line in
                if let longer = curl_slist_append(list, line) { list = longer } else { failed = true }
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
