import HTTPCore

/// One client request, as the handler sees it. It gets exactly one reply: `respond` (or
/// a stream) refuses a second, so every path replies once.
public final class ServerRequest {
    /// nil when the head itself could not be read (`failure` says why).
    public let head: RequestHead?
    /// Set when the request could not be read completely; the handler answers it
    /// (400 / 431 / 413) and the connection closes after that reply.
    public let failure: HTTPParseError?
    @exclusivity(unchecked) public internal(set) var body: [UInt8] = []
    var connection: Connection?
    private(set) var replied = false
    var onFinish: ((Bool) -> Void)?

    init(head: RequestHead?, failure: HTTPParseError?, connection: Connection) {
        self.head = head
        self.failure = failure
        self.connection = connection
    }

    /// The method as sent (case-sensitive); empty when no request line could be read.
    public var method: String { head?.method ?? "" }
    /// The request-target as sent: `/path?q` (origin-form) or `http://host/path` (absolute-form).
    public var target: String { head?.target ?? "" }

    /// The request's header fields, in order; none when the head could not be read.
    public var fields: HeaderFields { head?.fields ?? HeaderFields() }

    public func withHost<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? { head?.withHost(body) }

    public var headBytes: [UInt8] { head?.bytes ?? [] }

    public var asksUpgrade: Bool { head?.asksUpgrade ?? false }

    /// The socket peer's address (never X-Forwarded-For); `unix` for a Unix-socket peer.
    public var peerAddress: String { connection?.peerAddress ?? "" }

    /// The peer came through a Unix socket: it counts as loopback (DESIGN §4).
    public var peerIsUnixSocket: Bool { connection?.peer.isUnix ?? false }

    /// What became of a reply.
    public enum Delivery {
        /// Handed to the kernel whole.
        case delivered
        /// The client had gone (reset, or closed before the reply).
        case gone
        /// Partly sent; `whenFinished` learns how it ends.
        case pending
        /// Certain to be delivered: `recordNow` ran before the bytes left.
        case recorded
    }

    /// Sends the reply (Content-Length framing; no body for HEAD, 204 and 304).
    /// A `Connection: close` header among `headers` closes the connection after it.
    /// `recordNow` runs (then `.recorded` is returned) when the reply is certain to reach
    /// the client's kernel whole, before its bytes leave.
    @discardableResult
    public func respond(status: Int, headers: HeaderFields, body: [UInt8], recordNow: () -> Void = {},
                        shaping: ReplyShaping? = nil) -> Delivery {
        guard !replied else { return .gone }
        replied = true
        guard let connection, connection.isOpen else {
            self.connection = nil
            return .gone
        }
        return connection.reply(self, status: status, headers: headers, body: body, recordNow: recordNow, shaping: shaping)
    }

    /// For a `.pending` reply: runs once, with true when the client took all of it,
    /// false when it went away or did not drain it within `client_idle`.
    public func whenFinished(_ body: @escaping (Bool) -> Void) {
        onFinish = body
    }

    func finish(delivered: Bool) {
        let handler = onFinish
        onFinish = nil
        connection = nil
        handler?(delivered)
    }

    // MARK: Streaming (chunked) replies, for Server-Sent Events.

    var onClose: (() -> Void)?
    var onDrained: (() -> Void)?

    /// Starts a chunked reply; false when the client is already gone. `onDrained` runs
    /// each time everything written so far has reached the socket; `onClose` runs if the
    /// client disconnects before `endStream`.
    public func startStream(status: Int, headers: HeaderFields, sendBuffer: Int32,
                            onDrained: @escaping () -> Void, onClose: @escaping () -> Void) -> Bool {
        guard !replied, let connection, connection.isOpen else { return false }
        replied = true
        self.onClose = onClose
        self.onDrained = onDrained
        connection.startStream(self, status: status, headers: headers, sendBuffer: sendBuffer)
        return true
    }

    /// Answers `101 Switching Protocols` with `headers` and hands the connection over as a
    /// tunnel: `onInput` gets the client's bytes as they arrive, `write` sends bytes as
    /// they are (no chunked coding), `endStream` closes once they have left. False when
    /// the client is already gone.
    public func startTunnel(headers: HeaderFields, onInput: @escaping (UnsafeRawBufferPointer) -> Void,
                            onDrained: @escaping () -> Void, onClose: @escaping () -> Void) -> Bool {
        guard !replied, let connection, connection.isOpen else { return false }
        replied = true
        self.onClose = onClose
        self.onDrained = onDrained
        connection.startTunnel(self, headers: headers, input: onInput)
        return true
    }

    /// The tunnel's input waits in the kernel until `resumeInput`.
    public func pauseInput() { connection?.pauseTunnelInput() }

    public func resumeInput() { connection?.resumeTunnelInput() }

    /// Appends one chunk; a no-op once the client is gone.
    public func write(_ bytes: [UInt8]) {
        guard onClose != nil, !bytes.isEmpty, let connection, connection.isOpen else { return }
        connection.writeChunk(bytes)
    }

    /// Bytes accepted by `write` that the client has not taken yet.
    public var bufferedBytes: Int { connection?.queuedBytes ?? 0 }

    /// Ends the stream with the last chunk. After it, `onClose` never runs.
    public func endStream() {
        guard onClose != nil else { return }
        detachStream()?.endStream()
    }

    /// Drops the stream and its connection at once, unsent bytes included: for a client
    /// too far behind to be owed a clean end.
    public func abortStream() {
        guard onClose != nil else { return }
        detachStream()?.close()
    }

    /// The client went away mid-stream.
    func streamClosed() {
        let handler = onClose
        detachStream()
        handler?()
    }

    /// Drops the stream's callbacks and its connection; returns the connection.
    @discardableResult
    private func detachStream() -> Connection? {
        let open = connection
        onClose = nil
        onDrained = nil
        connection = nil
        return open
    }
}
