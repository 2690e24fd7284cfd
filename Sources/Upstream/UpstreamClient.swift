import HTTPCore
/// What the request pipeline needs of an upstream: the seam between the proxy and
/// libcurl. `SessionManager` is the real one; tests answer in-process through their own.
public protocol UpstreamClient: AnyObject {
    /// Starts one task; `completion` runs on the worker's loop exactly once.
    func start(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void)
    /// Fails every task in flight (shutdown); each completion still runs once.
    func abortAll()
    /// Tears down after the loop stopped.
    func close()
    /// The transfers in flight now, with their bytes so far (progress, `/-/inflight`).
    func inflight() -> [TransferProgress]
    /// Starts one task whose answer `sink` may take as it arrives; the task, to resume or
    /// cancel it (nil when it could not start: `completion` has then run).
    func start(_ request: UpstreamRequest, stream sink: any UpstreamStreamSink,
               completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) -> UpstreamTask?
    /// Lets a paused task's bytes flow again (they are offered to its sink at once).
    func resume(_ task: UpstreamTask)
    /// Ends a task now; its completion runs with `.aborted`. A finished task is ignored.
    func cancel(_ task: UpstreamTask)
    /// A connection to the request's upstream, connected and handed over (a WebSocket's).
    func openTunnel(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamTunnel, UpstreamFailure>) -> Void)
}

extension UpstreamClient {
    public func inflight() -> [TransferProgress] { [] }
    /// An upstream that cannot stream answers whole.
    public func start(_ request: UpstreamRequest, stream sink: any UpstreamStreamSink,
                      completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) -> UpstreamTask? {
        start(request, completion: completion)
        return nil
    }
    public func resume(_ task: UpstreamTask) {}
    public func cancel(_ task: UpstreamTask) {}
    public func openTunnel(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamTunnel, UpstreamFailure>) -> Void) {
        completion(.failure(.unavailable(code: 1, message: "this upstream client cannot open tunnels")))
    }
}

extension SessionManager: UpstreamClient {}

/// One transfer in flight: whose it is, when it began, its bytes so far and the totals
/// when known (Content-Length; a request body's size).
public struct TransferProgress: Sendable {
    public let tag: UpstreamRequest.Tag
    /// `Clock` seconds when the transfer started.
    public let started: Double
    public let bytesUp: Int
    public let bytesDown: Int
    public let totalUp: Int?
    public let totalDown: Int?
    /// A streaming answer's summary so far, a JSON object (DESIGN §9); nil otherwise.
    public var stream: String? = nil

    public init(tag: UpstreamRequest.Tag, started: Double, bytesUp: Int, bytesDown: Int, totalUp: Int?, totalDown: Int?,
                stream: String? = nil) {
        self.tag = tag
        self.started = started
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.totalUp = totalUp
        self.totalDown = totalDown
        self.stream = stream
    }
}

extension UpstreamResponse {
    /// A reply as an upstream would send it (for in-process pipelines).
    public init(status: Int, headerLines: String, contentType: String?, body: [UInt8], url: String) {
        self.init(status: status, headers: HeaderFields(lines: Array(headerLines.utf8)), contentType: contentType, body: body, url: url)
    }
}
