internal import CCurl
internal import CShims
import EventLoop
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// AFURLSessionManager on libcurl's multi interface, driven by one worker's event loop
/// (the hiperfifo pattern): curl tells us which sockets and timeout to watch, the loop
/// tells curl when they fire, and finished transfers are drained after every action.
/// Keep-alive connections live in the multi handle's pool and are reused across tasks.
public final class SessionManager {
    let loop: EventLoop
    let multi: UnsafeMutableRawPointer
    // The tables below are touched only on the worker's thread, by code that never holds
    // an access open across a call back into libcurl: unchecked, as the runtime's check
    // on each of them cost more than the lookup.
    @exclusivity(unchecked) private var watches: [Int32: Watch] = [:]
    @exclusivity(unchecked) var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
    private var timer: Timer!
    private(set) var closed = false
    /// Finished easy handles, reset and kept for the next task.
    @exclusivity(unchecked) private var idleHandles: [UnsafeMutableRawPointer] = []
    /// Handles made for a route's TLS policy, by its key: a handle keeps its policy for
    /// life, so no task pays for setting one and none inherits another's.
    @exclusivity(unchecked) private var policyHandles: [String: [UnsafeMutableRawPointer]] = [:]
    private let maxIdleHandles = 64
    /// Depth of calls into libcurl that may call back (a sink may ask to cancel from there).
    @exclusivity(unchecked) private var insideCurl = 0
    /// Cancels asked for from inside libcurl, done when it returns.
    @exclusivity(unchecked) private var cancelling: [UnsafeMutableRawPointer] = []
    /// Connect-only transfers live in a multi handle of their own: libcurl prunes idle
    /// connections of a multi by the age set on the transfer pruning them, and a tunnel's
    /// connection, idle as libcurl sees it, would be closed under its user.
    var tunnels: SessionManager?
    /// The open tunnels of this (tunnel) session, by easy handle.
    var openTunnels: [UnsafeMutableRawPointer: UpstreamTunnel] = [:]

    /// `curl_global_init`, once, before any thread starts.
    public static func globalInit() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }

    /// Upstream bodies count against the process's buffer budget as they arrive.
    private let budget: ProcessBudget?

    public init(loop: EventLoop, budget: ProcessBudget? = nil) throws(EventLoopError) {
        guard let multi = curl_multi_init() else { throw EventLoopError("curl_multi_init failed") }
        self.loop = loop
        self.budget = budget
        self.multi = multi
        timer = loop.makeTimer { [unowned self] in self.action(socket: CURL_SOCKET_TIMEOUT, flags: 0) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        do throws(CurlError) {
            try Curl.check(cshim_multi_setopt_socket_function(multi, SessionManager.socketCallback), "CURLMOPT_SOCKETFUNCTION")
            try Curl.check(cshim_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me), "CURLMOPT_SOCKETDATA")
            try Curl.check(cshim_multi_setopt_timer_function(multi, SessionManager.timerCallback), "CURLMOPT_TIMERFUNCTION")
            try Curl.check(cshim_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me), "CURLMOPT_TIMERDATA")
            // Without it the cache is sized from the handles currently added, and under load
            // most finished transfers' connections are closed instead of kept for the next.
            try Curl.check(cshim_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, SessionManager.connectionCache), "CURLMOPT_MAXCONNECTS")
        } catch {
            curl_multi_cleanup(multi)
            throw EventLoopError(error.description)
        }
    }

    /// Idle upstream connections kept per worker.
    static let connectionCache = 1024

    /// Starts one task; `completion` runs on this loop exactly once.
    public func start(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) {
        _ = start(request, sink: nil, completion: completion)
    }

    public func start(_ request: UpstreamRequest, stream sink: any UpstreamStreamSink,
                      completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) -> UpstreamTask? {
        start(request, sink: sink, completion: completion)
    }

    private func start(_ request: UpstreamRequest, sink: (any UpstreamStreamSink)?,
                       completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) -> UpstreamTask? {
        let profile = request.profile
        guard !closed, let easy = handle(for: request, profile: profile) else {
            completion(.failure(.unavailable(code: Int(CURLE_FAILED_INIT.rawValue), message: "cannot start an upstream transfer")))
            return nil
        }
        let transfer = Transfer(easy: easy, limit: request.maxResponseBytes, completion: completion)
        if let sink {
            transfer.sink = sink
            transfer.followsRedirects = request.followRedirects > 0
        }
        transfer.budget = budget
        transfer.policy = profile
        transfer.tag = request.tag
        transfer.url = request.url
        transfer.started = Clock.now()
        let idempotent = request.isIdempotent
        transfer.resendable = idempotent
        do throws(CurlError) {
            try Self.configure(transfer, request)
            // libcurl sends a request again by itself when the reused connection it went out
            // on dies before an answer: a second side effect for a POST. Anything that may not
            // be sent twice goes out on a new connection, where libcurl never does that.
            if !idempotent { try Self.freshConnection(transfer) }
            try Curl.check(curl_multi_add_handle(multi, easy), "curl_multi_add_handle")
        } catch {
            transfer.release()
            transfer.finish(.failure(.unavailable(code: error.code, message: error.description)))
            return nil
        }
        transfers[easy] = transfer
        return UpstreamTask(easy: easy)
    }

    public func resume(_ task: UpstreamTask) {
        guard transfers[task.easy] != nil else { return }
        // Unpausing hands libcurl's held bytes to the sink at once, from inside this call.
        insideCurl += 1
        _ = curl_easy_pause(task.easy, CURLPAUSE_CONT)
        insideCurl -= 1
        afterCurl()
    }

    public func cancel(_ task: UpstreamTask) {
        // A handle may not leave the multi from inside one of libcurl's callbacks: then it
        // leaves once libcurl has returned.
        if insideCurl > 0 { return cancelling.append(task.easy) }
        guard let transfer = transfers.removeValue(forKey: task.easy) else { return }
        _ = curl_multi_remove_handle(multi, task.easy)   // only fails for a handle not in the multi
        // Not pooled: a cancelled handle may be mid-response or paused.
        transfer.release()
        transfer.finish(.failure(.aborted))
    }

    private func afterCurl() {
        while let easy = cancelling.popLast() { cancel(UpstreamTask(easy: easy)) }
    }

    /// An idle handle for the request's TLS policy and cookie jar, or a new one with them set.
    func handle(for request: UpstreamRequest, profile: String?) -> UnsafeMutableRawPointer? {
        guard let profile else { return idleHandles.popLast() ?? Self.newHandle() }
        if let easy = policyHandles[profile]?.popLast() { return easy }
        guard let easy = Self.newHandle() else { return nil }
        do throws(CurlError) {
            try request.tls?.apply(to: easy)
            try request.cookies?.attach(to: easy)
            try Self.setVersion(easy, request)
        } catch {
            curl_easy_cleanup(easy)
            return nil
        }
        return easy
    }

    /// The HTTP version a profile's handles speak, set once when the handle is made.
    static func setVersion(_ easy: UnsafeMutableRawPointer, _ r: UpstreamRequest) throws(CurlError) {
        let https = r.url.utf8.starts(with: "https:".utf8)
        let version: Int
        switch r.httpVersion {
        case .auto: version = Int(CURL_HTTP_VERSION_2TLS)
        case .http1_1: version = Int(CURL_HTTP_VERSION_1_1)
        case .http2: version = Int(https ? CURL_HTTP_VERSION_2_0 : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
        }
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, version), "CURLOPT_HTTP_VERSION")
        // Where HTTP/2 may be spoken, wait for a connection to multiplex on rather than
        // opening one per concurrent request while the first is still negotiating.
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_PIPEWAIT, r.httpVersion != .http1_1 && (https || r.httpVersion == .http2) ? 1 : 0),
                       "CURLOPT_PIPEWAIT")
        // libcurl before 8.0 fails the second request on a reused h2c prior-knowledge
        // connection ("Error in the HTTP2 framing layer", fixed by curl's PR 10643): there,
        // each such request gets a connection of its own.
        let priorKnowledge = r.httpVersion == .http2 && !https
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, priorKnowledge && !Self.reusesPriorKnowledge ? 1 : 0),
                       "CURLOPT_FORBID_REUSE")
    }

    /// An easy handle with the options every task shares. They survive reuse: a recycled
    /// handle is not reset, so only what differs per task is set again.
    static func newHandle() -> UnsafeMutableRawPointer? {
        guard let easy = curl_easy_init() else { return nil }
        do throws(CurlError) {
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "CURLOPT_REDIR_PROTOCOLS_STR")
            // Never the environment's proxy (DESIGN §4). The empty proxy alone still has libcurl
            // read no_proxy and NO_PROXY on every request; "*" ends that lookup.
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_PROXY, ""), "CURLOPT_PROXY")
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_NOPROXY, "*"), "CURLOPT_NOPROXY")
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")   // all it decodes
            // Large bodies arrive in fewer reads and write callbacks than with the 16 KB default.
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, 64 << 10), "CURLOPT_BUFFERSIZE")
            try Curl.check(cshim_easy_setopt_write_function(easy, Transfer.write), "CURLOPT_WRITEFUNCTION")
            try Curl.check(cshim_easy_setopt_header_function(easy, Transfer.header), "CURLOPT_HEADERFUNCTION")
        } catch {
            curl_easy_cleanup(easy)
            return nil
        }
        return easy
    }

    /// Every option that differs per task, on a handle from `newHandle` (also the
    /// healthcheck's `Probe`). Whatever one task may set is set by every task, so nothing
    /// carries over from the handle's previous task.
    static func configure(_ t: Transfer, _ r: UpstreamRequest) throws(CurlError) {
        let easy = t.easy
        let me = Unmanaged.passUnretained(t).toOpaque()
        try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_URL, r.url), "CURLOPT_URL")
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(r.timeout * 1000)), "CURLOPT_TIMEOUT_MS")
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(r.connectTimeout * 1000)), "CURLOPT_CONNECTTIMEOUT_MS")
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, r.followRedirects > 0 ? 1 : 0), "CURLOPT_FOLLOWLOCATION")
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_MAXREDIRS, r.followRedirects), "CURLOPT_MAXREDIRS")
        try Curl.check(cshim_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(r.uncappedStreams ? 0 : r.maxResponseBytes)),
                       "CURLOPT_MAXFILESIZE_LARGE")
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA")
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA")
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, t.errorBuffer), "CURLOPT_ERRORBUFFER")
        // HTTPGET undoes a previous task's HEAD or POST; the method is then set on top.
        try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, nil), "CURLOPT_CUSTOMREQUEST")
        let sendsBody = r.method != "HEAD" && (!r.body.isEmpty || HTTPMethod.definesContent(r.method))
        switch r.method {
        case "GET" where !sendsBody: break
        case "HEAD": try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
        // Always the client's method: a body would otherwise turn a GET into a POST.
        default: try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, r.method), "CURLOPT_CUSTOMREQUEST")
        }
        if sendsBody {
            try Curl.check(cshim_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(r.body.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
            // COPYPOSTFIELDS copies the bytes now (POSTFIELDS would keep the pointer).
            let code = r.body.withUnsafeBytes { bytes in
                cshim_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS,
                                          UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)))
            }
            try Curl.check(code, "CURLOPT_COPYPOSTFIELDS")
        }
        t.headerList = try CurlHeaderList(fields: r.headers, sendsBody: sendsBody, traceparent: r.traceparent)
        try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(t.headerList?.pointer)), "CURLOPT_HTTPHEADER")
    }

    /// The transfers in flight, with libcurl's byte counts (read only when asked: a
    /// worker's progress tick, never the request path).
    public func inflight() -> [TransferProgress] {
        transfers.values.compactMap { t in
            guard let tag = t.tag else { return nil }
            var up: curl_off_t = 0, down: curl_off_t = 0, totalUp: curl_off_t = -1, totalDown: curl_off_t = -1
            _ = cshim_easy_getinfo_off_t(t.easy, CURLINFO_SIZE_UPLOAD_T, &up)
            _ = cshim_easy_getinfo_off_t(t.easy, CURLINFO_SIZE_DOWNLOAD_T, &down)
            _ = cshim_easy_getinfo_off_t(t.easy, CURLINFO_CONTENT_LENGTH_UPLOAD_T, &totalUp)
            _ = cshim_easy_getinfo_off_t(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &totalDown)
            return TransferProgress(tag: tag, started: t.started, bytesUp: Int(up), bytesDown: Int(down),
                                    totalUp: totalUp >= 0 ? Int(totalUp) : nil, totalDown: totalDown >= 0 ? Int(totalDown) : nil,
                                    stream: t.sink?.streamProgress)
        }
    }

    /// Fails every transfer in flight (shutdown); each completion still runs once.
    public func abortAll() {
        fail(all: nil)
        abortTunnels()
    }

    private func fail(all error: CurlError?) {
        let failing = transfers
        transfers.removeAll()
        for (easy, transfer) in failing {
            _ = curl_multi_remove_handle(multi, easy)   // only fails for a handle not in the multi
            transfer.release()
            transfer.finish(.failure(error.map { .unavailable(code: $0.code, message: $0.description) } ?? .aborted))
        }
    }

    /// Tears down after the loop stopped: callbacks unset first, because
    /// curl_multi_cleanup can still call them.
    public func close() {
        guard !closed else { return }
        closed = true
        abortAll()
        tunnels?.close()
        tunnels = nil
        // Unsetting callbacks cannot fail on a valid handle; cleanup's result has no remedy.
        _ = cshim_multi_setopt_socket_function(multi, nil)
        _ = cshim_multi_setopt_timer_function(multi, nil)
        _ = curl_multi_cleanup(multi)
        for easy in idleHandles + policyHandles.values.joined() { curl_easy_cleanup(easy) }
        idleHandles.removeAll()
        policyHandles.removeAll()
        for watch in watches.values { watch.cancel() }
        watches.removeAll()
        timer.cancel()
    }

    // MARK: driving curl

    private func action(socket: curl_socket_t, flags: Int32) {
        var running: Int32 = 0
        insideCurl += 1
        let code = curl_multi_socket_action(multi, socket, flags, &running)
        insideCurl -= 1
        // A socket curl already forgot is harmless; anything else leaves the multi handle
        // unusable, and every task in it is failed rather than left to hang.
        if code != CURLM_OK && code != CURLM_BAD_SOCKET {
            do throws(CurlError) { try Curl.check(code, "curl_multi_socket_action") } catch { fail(all: error) }
        }
        drain()
        if !cancelling.isEmpty { afterCurl() }
    }

    /// Reads every finished transfer (result before remove_handle) and completes it.
    private func drain() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            if let transfer = transfers[easy], transfer.tunnel != nil {
                transfers[easy] = nil
                connected(transfer, code)
                continue
            }
            _ = curl_multi_remove_handle(multi, easy)   // only fails for a handle not in the multi
            if code != CURLE_OK, let transfer = transfers[easy], transfer.resendable, Self.diedUnanswered(transfer, code) {
                transfer.resendable = false
                // A new connection, once: if that one fails too, its failure is the answer.
                if (try? Self.freshConnection(transfer)) != nil, curl_multi_add_handle(multi, easy) == CURLM_OK { continue }
            }
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            let result = Self.outcome(transfer, code)
            recycle(transfer)
            transfer.finish(result)
        }
    }

    /// Keeps the easy handle for reuse (fewer allocations per request); the connection
    /// pool lives in the multi handle either way.
    private func recycle(_ transfer: Transfer) {
        let pooled = transfer.policy.map { policyHandles[$0]?.count ?? 0 } ?? idleHandles.count
        if pooled < maxIdleHandles {
            // The task's header list and error buffer are freed with it: no pointer to
            // them stays behind. (Unsetting a pointer option cannot fail.)
            _ = cshim_easy_setopt_pointer(transfer.easy, CURLOPT_HTTPHEADER, nil)
            _ = cshim_easy_setopt_pointer(transfer.easy, CURLOPT_ERRORBUFFER, nil)
            if transfer.freshConnection { _ = cshim_easy_setopt_long(transfer.easy, CURLOPT_FRESH_CONNECT, 0) }
            if let policy = transfer.policy { policyHandles[policy, default: []].append(transfer.easy) } else { idleHandles.append(transfer.easy) }
            transfer.releaseKeepingHandle()
        } else {
            transfer.release()
        }
    }

    /// CURLOPT_FRESH_CONNECT for this transfer only: the handle returns to its pool without it.
    static func freshConnection(_ t: Transfer) throws(CurlError) {
        try Curl.check(cshim_easy_setopt_long(t.easy, CURLOPT_FRESH_CONNECT, 1), "CURLOPT_FRESH_CONNECT")
        t.freshConnection = true
    }

    fileprivate func socketChanged(_ fd: curl_socket_t, what: Int32) {
        switch SocketInterest(what) {
        case .forget:
            // Kept, paused: the next socket curl opens on this descriptor number reuses it.
            watches[fd]?.pause()
        case .watch(let read, let write):
            if let watch = watches[fd] {
                watch.set(read: read, write: write)
            } else {
                watches[fd] = loop.watch(fd: fd, read: read, write: write) { [unowned self] readable, writable in
                    self.action(socket: fd, flags: (readable ? CURL_CSELECT_IN : 0) | (writable ? CURL_CSELECT_OUT : 0))
                }
            }
        }
    }

    fileprivate func timerChanged(_ milliseconds: Int) {
        if milliseconds < 0 { timer.stop() } else { timer.schedule(after: Double(milliseconds) / 1000) }
    }

    /// CURLMOPT_SOCKETFUNCTION
    static let socketCallback: curl_socket_callback = { _, fd, what, userp, _ in
        Unmanaged<SessionManager>.fromOpaque(userp!).takeUnretainedValue().socketChanged(fd, what: what)
        return 0
    }

    /// CURLMOPT_TIMERFUNCTION — never calls curl; a 0 ms timer fires on the next turn.
    static let timerCallback: curl_multi_timer_callback = { _, milliseconds, userp in
        Unmanaged<SessionManager>.fromOpaque(userp!).takeUnretainedValue().timerChanged(milliseconds)
        return 0
    }
}
