import Resilience
import Cache
import HTTPCore
import Network
import Serializers
import Tapes
import Tracing
import Upstream

/// One compiled route. A class: it is handed along every stage of every request, and
/// copying a struct of this size retained each of its fields at every step.
public final class Route: Sendable {
    public let name: String
    public let prefix: String
    /// nil = all methods.
    public let methods: Set<String>?
    /// Set for absolute-form (HTTP_PROXY-style) routes: lowercased host[:port].
    public let host: String?
    public let upstream: UpstreamBase
    /// The upstream's host and port as its attempts' spans name them (`server.address`,
    /// `server.port`), encoded once.
    let upstreamSpanAttributes: EncodedAttributes
    public let timeout: Double
    public let connectTimeout: Double
    public let followRedirects: Int
    public let headers: HeaderFields
    /// The names of `headers`, which replace any client header of the same name.
    let headerNames: HeaderNames
    public let requestSerializerName: String
    public let requestSerializer: any RequestSerializer
    public let response: ResponseSettings
    public let responseSerializer: any ResponseSerializer
    public let output: OutputSettings
    /// `tape:`, unless off.
    public let tape: RouteTape?
    /// `mocks:`, tried in order before the tape and the upstream.
    public let mocks: [MockRule]
    /// `cache:`, when the route caches.
    public let cache: CacheRule?
    /// `tls:`: the route's security policy.
    public let tls: TLSPolicy?
    /// `http_version:` (auto: HTTP/2 over TLS when offered).
    public let httpVersion: UpstreamRequest.HTTPVersionSetting
    /// `health:`: the active probe, when set.
    public let health: RouteHealth?
    /// `cookies: jar`: the route's cookie jar; nil for `pass`.
    public let cookies: CookieJar?
    /// `network:`: latency, bandwidth, faults and chaos; nil when unset.
    public let network: NetworkSettings?
    /// `network != nil`, read on every request without copying the settings out.
    let hasNetwork: Bool
    /// `stream:`: which answers are served as they arrive (DESIGN §9).
    public let stream: StreamSettings
    /// `websocket:`: whether `Upgrade: websocket` is relayed, and how (DESIGN §9).
    public let websocket: WebSocketSettings
    /// `contract:`: the schema the normalized output must meet (DESIGN §10).
    public let contract: RouteContract?
    /// The response serializer for one event's data: the route's, without its status and
    /// content-type checks (a stream's head was checked once).
    let eventSerializer: any ResponseSerializer
    /// `websocket.normalize: json`: the serializer for upstream text messages.
    let messageSerializer: (any ResponseSerializer)?
    /// `limits:`: the upstream requests in flight and the queue behind them (DESIGN §11).
    public let limits: RouteLimits?
    /// The route's gate for `limits.concurrency`, shared by every worker and kept across reloads.
    let gate: UpstreamGate?
    /// The route's pause and `limits.rate`, likewise.
    let throttle: RouteThrottle
    /// `retry:`, and its budget and counts shared by every worker.
    public let retry: RouteRetry?
    let retries: RetryLedger?
    /// `breaker:`, shared by every worker.
    let breaker: RouteBreaker?
    /// Whether the upstream answers (DESIGN §6), shared by every worker.
    public let reachability: Reachability
    /// What the route sends upstream and makes of the answer, as text (DESIGN §3): a
    /// reload keeps what a route with an unchanged fingerprint stored.
    public let fingerprint: String
    /// The fingerprint hashed, in every cache key the route makes: entries are shared
    /// only by routes that would send the same request and make the same output.
    public let cacheScope: UInt64
    /// The prefix's UTF-8 length when it is ASCII (nil otherwise), and whether it ends in
    /// `/`: read on every request to cut the path, without walking characters.
    private let asciiPrefixLength: Int?
    private let prefixEndsInSlash: Bool
    /// What a request of this route goes through, in order (`RequestStage`); and the same
    /// with the network stage first, for while `/-/network` sets conditions at runtime.
    let stages: [any RequestStage]
    let stagesUnderRuntimeNetwork: [any RequestStage]

    init(name: String, prefix: String, methods: Set<String>?, host: String?, upstream: UpstreamBase, timeout: Double,
         connectTimeout: Double, followRedirects: Int, headers: [(String, String)], requestSerializerName: String,
         requestSerializer: any RequestSerializer, response: ResponseSettings, responseSerializer: any ResponseSerializer,
         output: OutputSettings, tape: RouteTape? = nil, mocks: [MockRule] = [], cache: CacheRule? = nil,
         tls: TLSPolicy? = nil, httpVersion: UpstreamRequest.HTTPVersionSetting = .auto, health: RouteHealth? = nil,
         network: NetworkSettings? = nil, stream: StreamSettings = StreamSettings(), websocket: WebSocketSettings = WebSocketSettings(),
         contract: RouteContract? = nil, limits: RouteLimits? = nil, gate: UpstreamGate? = nil, throttle: RouteThrottle? = nil,
         retry: RouteRetry? = nil, retries: RetryLedger? = nil, breaker: RouteBreaker? = nil,
         reachability: Reachability? = nil,
         cookies: CookieJar? = nil, fingerprint: String = "") {
        self.cookies = cookies
        self.limits = limits
        self.gate = gate ?? limits.flatMap { limits in limits.concurrency.map { UpstreamGate(limit: $0, queue: limits.queue) } }
        self.throttle = throttle ?? RouteThrottle(rate: limits?.rate.map { (count: $0.count, period: $0.period) })
        self.retry = retry
        self.retries = retries ?? retry.map { RetryLedger(percent: $0.budget) }
        self.breaker = breaker
        self.contract = contract
        self.network = network
        hasNetwork = network != nil
        self.stream = stream
        self.websocket = websocket
        messageSerializer = websocket.normalize == .json ? ResponseSerializerRegistry.makeForMessages(response) : nil
        eventSerializer = (try? ResponseSerializerRegistry.makeForEvents(response)) ?? responseSerializer
        self.health = health
        self.reachability = reachability ?? Reachability(route: name) { _ in }
        self.tls = tls
        self.httpVersion = httpVersion
        self.name = name
        self.prefix = prefix
        asciiPrefixLength = prefix.utf8.allSatisfy { $0 < 0x80 } ? prefix.utf8.count : nil
        prefixEndsInSlash = prefix.hasSuffix("/")
        self.methods = methods
        self.host = host
        self.upstream = upstream
        let (upstreamHost, upstreamPort) = Self.hostAndPort(upstream)
        upstreamSpanAttributes = EncodedAttributes([SpanAttribute("server.address", upstreamHost), SpanAttribute("server.port", upstreamPort)])
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.headers = HeaderFields(headers)
        headerNames = HeaderNames(headers.map(\.0))
        self.requestSerializerName = requestSerializerName
        self.requestSerializer = requestSerializer
        self.response = response
        self.responseSerializer = responseSerializer
        self.output = output
        self.tape = tape
        self.mocks = mocks
        self.cache = cache
        self.fingerprint = fingerprint
        cacheScope = OutputTag.hash(Array(fingerprint.utf8))
        let streams = stream.mode == .auto
        let websockets = websocket.mode == .relay
        stages = Self.stages(network: network != nil, mocks: !mocks.isEmpty, tape: tape, cache: cache, streams: streams,
                             websockets: websockets)
        stagesUnderRuntimeNetwork = Self.stages(network: true, mocks: !mocks.isEmpty, tape: tape, cache: cache, streams: streams,
                                                websockets: websockets)
    }

    /// What follows the prefix in a path the route matched. `/api` + `/users`: the
    /// separator belongs to the prefix; after `/api/` a leading `/` would be an empty
    /// segment, which the upstream join refuses.
    func remainder(of path: String) -> Substring {
        var rest: Substring
        if let count = asciiPrefixLength {
            rest = path[path.utf8.index(path.startIndex, offsetBy: count)...]
        } else {
            rest = path.dropFirst(prefix.count)
        }
        if !prefixEndsInSlash, rest.utf8.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
        return rest
    }

    /// What `tls.verify: false` means, for the warnings at load, reload and `check`.
    public static let unverifiedTLS = "tls.verify is false: any certificate for any host name is accepted, so anyone on the path can impersonate the upstream"

    /// Without `methods`, every method but CONNECT and TRACE (DESIGN §2).
    public func allows(_ method: String) -> Bool {
        methods?.contains(method) ?? HTTPMethod.isForwardedByDefault(method)
    }

    /// The response serializer and then `output` (numbers, canonical form): what a route
    /// makes of an upstream answer, live or replayed. Also the unsafe numbers found (nil
    /// for `numbers: keep`, which does not look).
    /// With `contract`, a serializer that can checks its output as it writes it.
    public func serialize(_ response: UpstreamResponse, checking contract: OutputContract? = nil) -> (SerializationResult, unsafeNumbers: Int?) {
        var outcome = responseSerializer.serialize(response, checking: contract)
        let unsafe = NumberGuard.apply(&outcome, mode: output.effectiveNumbers)
        if output.canonical { outcome = Self.canonicalized(outcome) }
        return (outcome, unsafe)
    }

    /// One event's data through the route's serializer and `output` (DESIGN §9).
    func serializeEvent(_ data: [UInt8], messages: Bool = false) -> SerializationResult {
        // Called where it is stored: bound to a local, the serializer was copied out of
        // its existential box (and its fields retained) for every event.
        var outcome = if messages, let messageSerializer { messageSerializer.serialize(event: data) }
                      else { eventSerializer.serialize(event: data) }
        _ = NumberGuard.apply(&outcome, mode: output.effectiveNumbers)
        if output.canonical { outcome = Self.canonicalized(outcome) }
        return outcome
    }

    /// RFC 8785 form; a number outside double range cannot be canonical, which is a
    /// serialization failure like any other (never silently non-canonical output).
    static func canonicalized(_ outcome: SerializationResult) -> SerializationResult {
        guard outcome.succeeded, let value = outcome.value else { return outcome }
        do throws(JSONError) {
            return SerializationResult(value: try value.canonicalized(), error: nil, serializer: outcome.serializer)
        } catch {
            return SerializationResult(value: nil, error: .serializationFailed(serializer: outcome.serializer, detail: error.description,
                                                                                underlying: nil), serializer: outcome.serializer)
        }
    }
}
