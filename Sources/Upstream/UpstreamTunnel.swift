internal import CCurl
internal import CShims
internal import CTLS
import EventLoop
import HTTPCore

/// A connection to the upstream that libcurl opened (TCP, TLS with the route's policy,
/// pins and client certificate) and then left to us: a WebSocket's (DESIGN §9). Bytes go
/// through `curl_easy_send` / `curl_easy_recv`, so TLS stays libcurl's; the socket is
/// watched on the worker's loop. Loop-bound. `close` ends it; so does the process's
/// shutdown, which runs `onAbort`.
public final class UpstreamTunnel {
    let easy: UnsafeMutableRawPointer
    public let fd: Int32
    private weak var owner: SessionManager?
    private var watch: Watch?
    private let loop: EventLoop
    public private(set) var isOpen = true
    /// Runs once if the tunnel is closed from outside (shutdown).
    public var onAbort: (() -> Void)?

    init(easy: UnsafeMutableRawPointer, fd: Int32, owner: SessionManager, loop: EventLoop) {
        self.easy = easy
        self.fd = fd
        self.owner = owner
        self.loop = loop
    }

    /// What a send or a receive came to.
    public enum IO: Equatable {
        /// This many bytes moved (never 0).
        case moved(Int)
        /// The socket cannot take or give more now.
        case wouldBlock
        /// The upstream ended the connection (a receive read its end).
        case ended
        /// The connection failed: libcurl's message.
        case failed(String)
    }

    public func send(_ bytes: UnsafeRawBufferPointer) -> IO {
        guard isOpen, !bytes.isEmpty else { return .failed("the tunnel is closed") }
        var sent = 0
        let code = curl_easy_send(easy, bytes.baseAddress, bytes.count, &sent)
        if code == CURLE_AGAIN { return .wouldBlock }
        guard code == CURLE_OK else { return .failed(String(cString: curl_easy_strerror(code))) }
        return sent > 0 ? .moved(sent) : .wouldBlock
    }

    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> IO {
        guard isOpen else { return .failed("the tunnel is closed") }
        var received = 0
        let code = curl_easy_recv(easy, buffer.baseAddress, buffer.count, &received)
        if code == CURLE_AGAIN { return .wouldBlock }
        guard code == CURLE_OK else { return .failed(String(cString: curl_easy_strerror(code))) }
        return received > 0 ? .moved(received) : .ended
    }

    /// Watches the socket in the directions asked (none: stops watching). `fire` gets
    /// (readable, writable).
    public func watch(read: Bool, write: Bool, _ fire: @escaping (Bool, Bool) -> Void) {
        guard isOpen else { return }
        if let watch {
            if read || write { watch.set(read: read, write: write) } else { watch.pause() }
        } else if read || write {
            watch = loop.watch(fd: fd, read: read, write: write, fire)
        }
    }

    /// Closes the connection; nothing more is sent or received.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        watch?.cancel()
        watch = nil
        onAbort = nil
        owner?.closeTunnel(self)
    }

    /// The process is stopping.
    func abort() {
        let handler = onAbort
        close()
        handler?()
    }
}

/// Sec-WebSocket-Accept for a handshake's key (RFC 6455 §4.2.2).
public enum WebSocketAccept {
    public static func value(forKey key: String) -> String? {
        var out = [CChar](repeating: 0, count: 32)
        let utf8 = Array(key.utf8)
        let ok = utf8.withUnsafeBufferPointer { k in
            k.withMemoryRebound(to: CChar.self) { tlscheck_websocket_accept($0.baseAddress, $0.count, &out, out.count) == 0 }
        }
        return ok ? String(decoding: out.prefix(28).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }
}

extension SessionManager {
    /// Opens a connection to the request's upstream (its URL's scheme, host and port;
    /// TLS with its policy) and hands it over when it is up; nothing is sent on it. The
    /// request's `connectTimeout` and `timeout` bound the connect.
    public func openTunnel(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamTunnel, UpstreamFailure>) -> Void) {
        tunnelSession().connectOnly(request, completion: completion)
    }
}
