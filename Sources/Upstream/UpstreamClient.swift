/// What the request pipeline needs of an upstream: the seam between the proxy and
/// libcurl. `SessionManager` is the real one; tests answer in-process through their own.
public protocol UpstreamClient: AnyObject {
    /// Starts one task; `completion` runs on the worker's loop exactly once.
    func start(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamReply, UpstreamFailure>) -> Void)
    /// Fails every task in flight (shutdown); each completion still runs once.
    func abortAll()
    /// Tears down after the loop stopped.
    func close()
}

extension SessionManager: UpstreamClient {}

extension UpstreamReply {
    /// A reply as an upstream would send it (for in-process pipelines).
    public init(status: Int, headerLines: String, contentType: String?, body: [UInt8], url: String) {
        self.init(status: status, headers: UpstreamHeaders(lines: Array(headerLines.utf8)), contentType: contentType, body: body, url: url)
    }
}
