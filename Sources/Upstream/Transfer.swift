internal import CCurl
internal import CShims
import HTTPCore

/// One upstream task: AF's per-task delegate. It owns its easy handle and header list,
/// accumulates status, headers and body (capped), and completes exactly once.
final class Transfer {
    let easy: UnsafeMutableRawPointer
    let limit: Int
    let completion: (Result<UpstreamResponse, UpstreamFailure>) -> Void
    // Written only from libcurl's callbacks on the worker's thread, never while another
    // access is open: unchecked, as the runtime check cost ~2 % of a small request.
    @exclusivity(unchecked) var body: [UInt8] = []
    @exclusivity(unchecked) var headers = HeaderFields()
    var overLimit = false
    /// Set when the process-wide buffer budget refused more of this body.
    var overBudget = false
    /// What this body holds of the budget, given back when the task ends.
    var charged = 0
    var budget: ProcessBudget?
    var headerList: CurlHeaderList?
    /// The TLS policy its handle was made for (the pool it returns to); nil: none.
    var policy: String?
    var tag: UpstreamRequest.Tag?
    /// The URL asked for: the effective URL is the same String unless a redirect was followed.
    var url = ""
    /// `Clock` seconds when it started.
    var started = 0.0
    /// The request may go out once more on a new connection if its reused one dies
    /// before any answer (DESIGN §11); cleared once it has.
    var resendable = false
    /// CURLOPT_FRESH_CONNECT is set on the handle (undone before it is pooled again).
    var freshConnection = false
    /// CURLOPT_ERRORBUFFER: libcurl keeps the pointer, so it is owned C memory.
    let errorBuffer: UnsafeMutablePointer<CChar> = {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        buffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        return buffer
    }()
    private(set) var finished = false
    /// Takes the answer as it arrives when it says so at the head (DESIGN §9).
    var sink: (any UpstreamStreamSink)?
    /// The sink took this answer: body bytes go to it, not into `body`.
    private(set) var streaming = false
    /// The sink ended the transfer.
    private(set) var stopped = false
    /// Redirects are followed: a 3xx head with Location is not the final one.
    var followsRedirects = false
    /// A connect-only transfer: this hears of its connection instead of `completion`.
    var tunnel: ((Result<UpstreamTunnel, UpstreamFailure>) -> Void)?

    init(easy: UnsafeMutableRawPointer, limit: Int, completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) {
        self.easy = easy
        self.limit = limit
        self.completion = completion
    }

    /// Hands the outcome over once; later calls are ignored. The body's budget is given
    /// back after the completion: by then the reply has been built and queued.
    func finish(_ result: Result<UpstreamResponse, UpstreamFailure>) {
        guard !finished else { return }
        finished = true
        if let tunnel {
            self.tunnel = nil
            if case .failure(let failure) = result { tunnel(.failure(failure)) }
            return
        }
        completion(result)
        budget?.release(charged)
        charged = 0
    }

    /// Frees the C side. Runs after curl_multi_remove_handle.
    func release() {
        curl_easy_cleanup(easy)
        releaseKeepingHandle()
    }

    /// Frees what this task owned but leaves the (reset) easy handle to the pool.
    func releaseKeepingHandle() {
        headerList = nil
        errorBuffer.deallocate()
    }

    func received(_ data: UnsafeRawBufferPointer) -> Int {
        if streaming, let sink {
            switch sink.received(data) {
            case .taken: return data.count
            case .pause: return Int(CURL_WRITEFUNC_PAUSE)
            case .stop:
                stopped = true
                return 0
            }
        }
        if body.isEmpty { reserveDeclaredLength() }
        guard body.count + data.count <= limit else {
            overLimit = true
            return 0   // != size*nmemb: libcurl aborts with CURLE_WRITE_ERROR
        }
        if let budget {
            guard budget.charge(data.count) else {
                overBudget = true
                return 0
            }
            charged += data.count
        }
        body.append(contentsOf: data.bindMemory(to: UInt8.self))
        return data.count
    }

    /// Sizes the body once from Content-Length, instead of regrowing it by doubling
    /// (each regrowth copies everything received so far), with `BodyRoom` to spare.
    private func reserveDeclaredLength() {
        var declared: curl_off_t = -1
        // A failure leaves `declared` at -1: the body then grows as it comes.
        _ = cshim_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared)
        if declared > 0 { body.reserveCapacity(min(Int(declared), limit) + BodyRoom.bytes) }
    }

    /// One header line; a status line starts a new response (redirects, 1xx).
    func receivedHeader(_ data: UnsafeRawBufferPointer) {
        let line = data.bindMemory(to: UInt8.self)
        if sink != nil, !streaming, line.count <= 2, line.first == 0x0D || line.first == 0x0A {
            return headEnded()
        }
        if line.count >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
           line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/") {
            headers.removeAll()
            return
        }
        headers.append(line: line)
    }

    /// The empty line after a head: the sink decides on the final one.
    private func headEnded() {
        var status = 0
        guard cshim_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, status >= 200 else { return }
        if followsRedirects, (300...399).contains(status), headers.first("Location") != nil { return }
        guard let sink, sink.streams(status: status, headers: headers) else { return }
        streaming = true
        // The stream has begun: the route's timeout covered the head only. Setting it is a
        // stored value libcurl reads as it checks, safe from its own callback.
        _ = cshim_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, 0)
    }

    var errorMessage: String { String(cString: errorBuffer) }

    /// CURLOPT_WRITEFUNCTION
    static let write: curl_write_callback = { pointer, size, count, userdata in
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
        return transfer.received(UnsafeRawBufferPointer(start: pointer, count: size * count))
    }

    /// CURLOPT_HEADERFUNCTION
    static let header: curl_write_callback = { pointer, size, count, userdata in
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
        transfer.receivedHeader(UnsafeRawBufferPointer(start: pointer, count: size * count))
        return size * count
    }
}
