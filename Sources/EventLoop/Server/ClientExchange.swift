import HTTPCore

/// What the request path reads of one client request: the seam between the HTTP server
/// and everything after it. `ServerRequest` is the server's; tests drive the pipeline
/// in-process through their own.
public protocol ClientRequest: AnyObject {
    /// Set when the request could not be read; the reply then closes the connection.
    var failure: HTTPParseError? { get }
    var method: String { get }
    var target: String { get }
    var body: [UInt8] { get }
    var peerAddress: String { get }
    var peerIsUnixSocket: Bool { get }
    /// The header fields, in order.
    var fields: HeaderFields { get }
    /// The first `Host` field's value as bytes, nil without one.
    func withHost<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R?
    /// The request head as received: the request line, the fields, the empty line.
    var headBytes: [UInt8] { get }
    /// The request carries an `Upgrade` field.
    var asksUpgrade: Bool { get }
}

extension ClientRequest {
    public func withHost<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? { fields.withFirst("Host", body) }
    public var asksUpgrade: Bool { fields.first("Upgrade") != nil }
}

/// The one reply to a request.
public protocol Replier: AnyObject {
    /// The one reply (Content-Length framing); a second is refused. `recordNow` runs before
    /// the bytes leave when their delivery is certain (then the result is `.recorded`).
    /// `shaping` holds, paces or cuts it (then it is `.pending` or `.gone`).
    func respond(status: Int, headers: HeaderFields, body: [UInt8], recordNow: () -> Void,
                 shaping: ReplyShaping?) -> ServerRequest.Delivery
    /// For a `.pending` reply: how it ended (true when the client took all of it).
    func whenFinished(_ body: @escaping (Bool) -> Void)
}

/// A chunked reply instead of the one reply: the live event stream's.
public protocol StreamReplier: AnyObject {
    /// Starts the stream; false when the client is gone.
    func startStream(status: Int, headers: HeaderFields, sendBuffer: Int32,
                     onDrained: @escaping () -> Void, onClose: @escaping () -> Void) -> Bool
    func write(_ bytes: [UInt8])
    var bufferedBytes: Int { get }
    func endStream()
    func abortStream()
}

/// A `101` and the connection as a tunnel instead of a reply (a WebSocket). `write`,
/// `bufferedBytes`, `endStream` and `abortStream` are the stream's.
public protocol TunnelReplier: StreamReplier {
    func startTunnel(headers: HeaderFields, onInput: @escaping (UnsafeRawBufferPointer) -> Void,
                     onDrained: @escaping () -> Void, onClose: @escaping () -> Void) -> Bool
    func pauseInput()
    func resumeInput()
}

/// A request with its reply, as the server hands it over.
public typealias ClientExchange = ClientRequest & Replier & StreamReplier

extension ServerRequest: ClientRequest, Replier, StreamReplier, TunnelReplier {}
