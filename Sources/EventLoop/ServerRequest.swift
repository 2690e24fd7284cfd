internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// One client request. evhttp owns it until the single reply; `respond` refuses a
/// second reply, so every path replies exactly once.
public final class ServerRequest {
    private let raw: OpaquePointer
    private var replied = false
    public let method: String
    /// The request-target as sent: `/path?q` (origin-form) or `http://host/path` (absolute-form).
    public let target: String

    init(_ raw: OpaquePointer) {
        self.raw = raw
        method = ServerRequest.methodName(evhttp_request_get_command(raw))
        target = evhttp_request_get_uri(raw).map { String(cString: $0) } ?? "/"
    }

    /// Each request header's name and value as bytes, in order, without a String per
    /// header (most are only looked at, and those forwarded go to libcurl as bytes).
    public func forEachHeader(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        forEachEntry { key, value in
            let bytes = { (text: UnsafePointer<CChar>) in
                UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
            }
            body(bytes(key), bytes(value))
        }
    }

    /// evhttp's input header list, entry by entry.
    private func forEachEntry(_ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void) {
        var entry = evhttp_request_get_input_headers(raw)?.pointee.tqh_first
        while let current = entry {
            body(current.pointee.key, current.pointee.value)
            entry = current.pointee.next.tqe_next
        }
    }

    public func header(_ name: String) -> String? {
        name.withCString { evhttp_find_header(evhttp_request_get_input_headers(raw), $0) }.map { String(cString: $0) }
    }

    /// The request line and header lines as evhttp counts them against its header limit
    /// (without line ends).
    public var headBytes: Int {
        var total = method.utf8.count + 1 + target.utf8.count + 9   // "GET /x HTTP/1.1"
        forEachEntry { key, value in total += strlen(key) + 2 + strlen(value) }
        return total
    }

    /// The body's length, without copying it.
    public var bodyCount: Int {
        evhttp_request_get_input_buffer(raw).map { evbuffer_get_length($0) } ?? 0
    }

    public var body: [UInt8] {
        guard let buffer = evhttp_request_get_input_buffer(raw) else { return [] }
        let length = evbuffer_get_length(buffer)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        _ = bytes.withUnsafeMutableBytes { evbuffer_copyout(buffer, $0.baseAddress, length) }
        return bytes
    }

    /// The socket peer's address (never X-Forwarded-For).
    public var peerAddress: String {
        guard let connection = evhttp_request_get_connection(raw) else { return "" }
        var address: UnsafeMutablePointer<CChar>?
        var port: UInt16 = 0
        evhttp_connection_get_peer(connection, &address, &port)
        return address.map { String(cString: $0) } ?? ""
    }

    /// Sends the reply; false when the client had already gone (evhttp detaches the
    /// request from a closed connection and frees it on this reply) or it was sent before.
    @discardableResult
    public func respond(status: Int, headers: [(String, String)], body: [UInt8]) -> Bool {
        guard !replied else { return false }
        replied = true
        let connected = evhttp_request_get_connection(raw).map(ServerRequest.peerIsConnected) ?? false
        addHeaders(headers)
        // The request's own output buffer: no evbuffer to create, move and free per reply.
        let buffer = evhttp_request_get_output_buffer(raw)
        if body.count >= ServerRequest.referenceThreshold {
            // Large bodies are lent to libevent instead of copied; it releases them once
            // they reach the socket.
            let pinned = Unmanaged.passRetained(PinnedBytes(body))
            let base = pinned.takeUnretainedValue().baseAddress
            evbuffer_add_reference(buffer, base, body.count, { _, _, arg in
                Unmanaged<PinnedBytes>.fromOpaque(arg!).release()
            }, pinned.toOpaque())
        } else if !body.isEmpty {
            _ = body.withUnsafeBytes { evbuffer_add(buffer, $0.baseAddress, $0.count) }
        }
        ServerRequest.reason(status).withCString { evhttp_send_reply(raw, Int32(status), $0, nil) }
        return connected
    }

    private func addHeaders(_ headers: [(String, String)]) {
        let output = evhttp_request_get_output_headers(raw)
        // withCString: short Strings are copied to the stack, where passing them as
        // pointers would allocate a C copy of each.
        for (name, value) in headers {
            name.withCString { name in value.withCString { value in _ = evhttp_add_header(output, name, value) } }
        }
    }

    // MARK: Streaming (chunked) replies, for Server-Sent Events.

    private var onClose: (() -> Void)?
    private var onDrained: (() -> Void)?
    private var freedWithConnection = false

    /// Starts a chunked reply; false when the client is already gone. `onDrained` runs
    /// each time everything written so far has reached the socket; `onClose` runs if the
    /// client disconnects before `endStream`.
    public func startStream(status: Int, headers: [(String, String)], sendBuffer: Int32,
                            onDrained: @escaping () -> Void, onClose: @escaping () -> Void) -> Bool {
        guard !replied, let connection = evhttp_request_get_connection(raw) else { return false }
        replied = true
        self.onClose = onClose
        self.onDrained = onDrained
        addHeaders(headers)
        // A stream needs no large kernel buffer; a small one makes a stalled client
        // visible (and bounded) in our own buffer quickly.
        if let bev = evhttp_connection_get_bufferevent(connection) {
            var size = sendBuffer
            setsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        evhttp_connection_set_closecb(connection, ServerRequest.closeCallback, Unmanaged.passUnretained(self).toOpaque())
        evhttp_send_reply_start(raw, Int32(status), ServerRequest.reason(status))
        return true
    }

    /// Appends one chunk; a no-op once the client is gone.
    public func write(_ bytes: [UInt8]) {
        guard onClose != nil, evhttp_request_get_connection(raw) != nil, !bytes.isEmpty else { return }
        let buffer = evbuffer_new()
        defer { evbuffer_free(buffer) }
        _ = bytes.withUnsafeBytes { evbuffer_add(buffer, $0.baseAddress, $0.count) }
        evhttp_send_reply_chunk_with_cb(raw, buffer, ServerRequest.drainedCallback, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The chunk callback: the connection's output buffer is empty again.
    static let drainedCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, arg in
        guard let arg else { return }
        let request = Unmanaged<ServerRequest>.fromOpaque(arg).takeUnretainedValue()
        let handler = request.onDrained
        handler?()
    }

    /// Bytes accepted by `write` that the client has not taken yet.
    public var bufferedBytes: Int {
        guard let connection = evhttp_request_get_connection(raw),
              let bev = evhttp_connection_get_bufferevent(connection),
              let output = bufferevent_get_output(bev) else { return 0 }
        return evbuffer_get_length(output)
    }

    /// Ends the stream (and frees the request). After it, `onClose` never runs.
    public func endStream() { finishStream(abort: false) }

    /// Drops the stream and its connection at once, unsent bytes included: for a client
    /// too far behind to be owed a clean end.
    public func abortStream() { finishStream(abort: true) }

    private func finishStream(abort: Bool) {
        guard onClose != nil else { return }
        onClose = nil
        onDrained = nil
        // evhttp frees a request it did not detach along with its connection.
        guard !freedWithConnection else { return }
        if let connection = evhttp_request_get_connection(raw) {
            evhttp_connection_set_closecb(connection, nil, nil)
            if abort {
                // Frees the request with it: it is still on the connection's queue.
                evhttp_connection_free(connection)
                return
            }
        }
        evhttp_send_reply_end(raw)
    }

    /// evhttp_connection_set_closecb: the client went away mid-stream. The request is
    /// detached from the connection by now and still ours to end.
    static let closeCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, arg in
        guard let arg else { return }
        let request = Unmanaged<ServerRequest>.fromOpaque(arg).takeUnretainedValue()
        request.freedWithConnection = evhttp_request_get_connection(request.raw) != nil
        let handler = request.onClose
        handler?()
    }

    /// evhttp does not read while a request is being handled, so a client that closed
    /// meanwhile shows only as end-of-file on the socket: peek for it. (A client that
    /// half-closes after sending still gets the reply, but counts as gone.)
    static func peerIsConnected(_ connection: OpaquePointer) -> Bool {
        guard let bev = evhttp_connection_get_bufferevent(connection) else { return false }
        var byte: UInt8 = 0
        let n = recv(bufferevent_getfd(bev), &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    }

    /// Below this, copying into the evbuffer costs less than lending.
    static let referenceThreshold = 16 << 10

    static func methodName(_ command: evhttp_cmd_type) -> String {
        switch command {
        case EVHTTP_REQ_GET: return "GET"
        case EVHTTP_REQ_POST: return "POST"
        case EVHTTP_REQ_HEAD: return "HEAD"
        case EVHTTP_REQ_PUT: return "PUT"
        case EVHTTP_REQ_DELETE: return "DELETE"
        case EVHTTP_REQ_OPTIONS: return "OPTIONS"
        case EVHTTP_REQ_TRACE: return "TRACE"
        case EVHTTP_REQ_CONNECT: return "CONNECT"
        case EVHTTP_REQ_PATCH: return "PATCH"
        default: return "UNKNOWN"
        }
    }

    static func reason(_ status: Int) -> String { HTTPReason.phrase(status) }
}

/// A byte array kept alive, at a fixed address, while libevent holds a reference to it.
final class PinnedBytes {
    private let bytes: [UInt8]
    /// The array is never mutated after this point, so its storage does not move.
    let baseAddress: UnsafeRawPointer

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        baseAddress = bytes.withUnsafeBytes { $0.baseAddress! }
    }
}
