/// One finished request: AF's task-completion notification, as every sink receives it
/// (DESIGN §6). Built once, at the single place a reply leaves the worker.
///
/// A class: the log, the metrics, the batch, the recent ring and every subscriber hold the
/// same event, and sharing it costs a retain where copying a struct of a dozen Strings
/// cost a retain per field. Immutable but for `rendered`, which the owning worker sets
/// once before the event is published (through the hub's lock) and nobody writes after:
/// hence `@unchecked Sendable`.
public final class CompletionEvent: @unchecked Sendable {
    /// Wall-clock start, seconds since the Unix epoch.
    public let startedAt: Double
    public let requestID: String
    /// The route name; `RouteLabel.unmatched` / `.admin` for requests no route served.
    public let route: String
    public let method: String
    /// The client's path, without the query string (queries may carry secrets).
    public let path: String
    /// The upstream URL without its query string, when a request was sent.
    public let upstreamURL: String?
    /// The status sent to the client (499 when the client left before the reply).
    public let status: Int
    public let upstreamStatus: Int?
    /// The upstream response's Content-Type, as the serializer validated it.
    public let contentType: String?
    /// The response serializer that produced the value (a compound's member), if any.
    public let serializer: String?
    /// `ok`, or the failure's problem type with `_` for `-` (the metrics label).
    public let outcome: String
    /// Upstream response body bytes received.
    public let bytesIn: Int
    /// Response body bytes sent to the client.
    public let bytesOut: Int
    public let duration: Double
    public let upstreamDuration: Double?
    public let serializeDuration: Double?
    /// The problem detail (or title) for failures; nil for `ok`.
    public let error: String?
    /// The Content-Type sent to the client (HAR).
    public let responseContentType: String?
    /// Numbers in the upstream's payload that a double cannot hold exactly (`output.numbers`);
    /// nil where nobody looked (`keep`, the default, and answers without a payload).
    public let unsafeNumbers: Int?
    /// How many ways the answer broke the route's contract (DESIGN §10); nil when it has
    /// none or met it.
    public let contractViolations: Int?
    /// Attempts at the upstream when `retry` sent the request more than once.
    public let attempts: Int?
    /// Time spent in the route's queue (the upstream's pause, a token, a slot), when it waited.
    public let queueDuration: Double?
    /// Where a route's payload came from: upstream, tape, mock or cache; nil without a route.
    public let source: String?
    /// How a caching route's cache met the request: hit, miss, stale, revalidated,
    /// collapsed or bypass; nil on routes without a cache.
    public let cache: String?
    /// The HTTP version the upstream answered in (`1.1`, `2`, …); nil without a network exchange.
    public let httpVersion: String?
    /// The network conditions and faults applied, as `Serializerd-Fault-Applied` lists
    /// them (`latency=800ms, status=503`); nil when none.
    public let faults: String?
    /// A stream's or WebSocket's summary, a JSON object (DESIGN §9); nil otherwise.
    public let stream: String?
    /// The request and answers themselves, for the full HAR (not in the event's JSON).
    public let exchange: CapturedExchange?
    /// `json`, once rendered for the sinks that need it.
    var rendered: [UInt8]?

    public init(startedAt: Double, requestID: String, route: String, method: String, path: String, upstreamURL: String?,
                status: Int, upstreamStatus: Int?, contentType: String?, serializer: String?, outcome: String,
                bytesIn: Int, bytesOut: Int, duration: Double, upstreamDuration: Double?, serializeDuration: Double?,
                error: String?, responseContentType: String?, unsafeNumbers: Int? = nil, source: String? = nil,
                cache: String? = nil, httpVersion: String? = nil, faults: String? = nil, exchange: CapturedExchange? = nil,
                stream: String? = nil, contractViolations: Int? = nil, attempts: Int? = nil,
                queueDuration: Double? = nil) {
        self.stream = stream
        self.contractViolations = contractViolations
        self.attempts = attempts
        self.queueDuration = queueDuration
        self.httpVersion = httpVersion
        self.faults = faults
        self.startedAt = startedAt
        self.requestID = requestID
        self.route = route
        self.method = method
        self.path = path
        self.upstreamURL = upstreamURL
        self.status = status
        self.upstreamStatus = upstreamStatus
        self.contentType = contentType
        self.serializer = serializer
        self.outcome = outcome
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.duration = duration
        self.upstreamDuration = upstreamDuration
        self.serializeDuration = serializeDuration
        self.error = error
        self.responseContentType = responseContentType
        self.unsafeNumbers = unsafeNumbers
        self.source = source
        self.cache = cache
        self.exchange = exchange
    }
}
