import Serializers
import Telemetry

/// Every way a proxied request can fail (DESIGN §3's table). The client status is
/// chosen here and nowhere else.
public enum ProxyFailure: Error, Sendable, Equatable {
    /// The response serializer refused the upstream response.
    case response(SerializationError, upstream: UpstreamEvidence)
    /// Refused, reset, DNS or TLS failure: libcurl's CURLcode and message.
    case upstreamUnavailable(curlCode: Int, message: String, url: String?)
    /// `streamIdle`: a stream had no byte for `seconds` (`stream.idle`), after its head.
    case upstreamTimeout(url: String?, seconds: Double, streamIdle: Bool = false)
    case upstreamBodyTooLarge(limit: Int, url: String?)
    /// Nothing matched: the method and the path (or absolute URL) the client asked for.
    case noRoute(String)
    case methodNotAllowed(allow: [String])
    case invalidPath(String)
    case headersTooLarge(limit: Int)
    /// An admin request from a network not in `admin.allow` (host nil), or naming a `Host`
    /// admin does not answer to (DNS rebinding).
    case forbidden(host: String?)
    /// A route asked with a `Host` that does not name this daemon (DNS rebinding, DESIGN §4).
    case misdirected(host: String)
    case badRequest(String)
    /// An admin endpoint's query parameter it does not know (`/-/recent?format=xml`).
    case invalidQuery(String)
    case requestTooLarge(limit: Int)
    case unavailable
    /// The request could not be read: request line, header fields or framing (RFC 9112).
    case malformedRequest(String)
    /// Over `limits.max_buffered_bytes`: retry in a second.
    case overloaded
    /// The route's breaker is open (DESIGN §11); a probe may go in `retryAfter` seconds.
    case circuitOpen(retryAfter: Double, failures: Int, window: Double)
    /// The request already passed through this serializerd (its own `Via` entry).
    case loopDetected
    /// `/-/failures/<request-id>` for a request whose evidence is not kept.
    case noSuchFailure(String)
    /// `/-/streams/<request-id>` for a stream whose events are not kept.
    case noSuchStream(String)
    /// `tape.mode: replay` and no recording matches; the detail names the nearest ones.
    case replayMiss(String)
    /// `cache.policy: only_cache` (or the client's `only-if-cached`) and nothing usable stored.
    case cacheMiss(String)
    /// A `{status: N}` fault of the route's network conditions or a `Serializerd-Fault`
    /// header; the detail says which.
    case injectedFault(status: Int, detail: String)
    /// `Upgrade: websocket` without what RFC 6455 §4.2.1 requires of a handshake.
    case webSocketHandshake(String)
    /// A `Sec-WebSocket-Version` other than 13: 426, naming 13 (RFC 6455 §4.4).
    case webSocketVersion(String)

    /// The status sent to the client. Whenever the serializer's error chain holds an
    /// unacceptable 4xx/5xx upstream status, the client gets that status.
    public var clientStatus: Int {
        switch self {
        case .response(let error, _): return error.unacceptableErrorStatus ?? 502
        case .upstreamUnavailable, .upstreamBodyTooLarge, .replayMiss: return 502
        case .upstreamTimeout, .cacheMiss: return 504
        case .noRoute, .noSuchFailure, .noSuchStream: return 404
        case .methodNotAllowed: return 405
        case .invalidPath, .badRequest, .invalidQuery: return 400
        case .headersTooLarge: return 431
        case .forbidden: return 403
        case .misdirected: return 421
        case .requestTooLarge: return 413
        case .unavailable, .overloaded, .circuitOpen: return 503
        case .malformedRequest: return 400
        case .loopDetected: return 508
        case .injectedFault(let status, _): return status
        case .webSocketHandshake: return 400
        case .webSocketVersion: return 426
        }
    }

    /// The problem type suffix, also the metrics `outcome` (with `_` for `-`).
    public var typeSuffix: String {
        switch self {
        case .response(let error, _): return error.typeSuffix
        case .upstreamUnavailable: return "upstream-unavailable"
        case .upstreamTimeout: return "upstream-timeout"
        case .upstreamBodyTooLarge: return "upstream-body-too-large"
        case .noRoute: return "no-route"
        case .methodNotAllowed: return "method-not-allowed"
        case .invalidPath: return "invalid-path"
        case .headersTooLarge: return "headers-too-large"
        case .forbidden: return "forbidden"
        case .misdirected: return "misdirected-request"
        case .badRequest: return "bad-request"
        case .invalidQuery: return "invalid-query"
        case .requestTooLarge: return "request-too-large"
        case .unavailable: return "unavailable"
        case .malformedRequest: return "bad-request"
        case .overloaded: return "overloaded"
        case .circuitOpen: return "circuit-open"
        case .loopDetected: return "loop-detected"
        case .noSuchFailure: return "no-such-failure"
        case .noSuchStream: return "no-such-stream"
        case .replayMiss: return "replay-miss"
        case .cacheMiss: return "cache-miss"
        case .injectedFault: return "injected-fault"
        case .webSocketHandshake: return "bad-request"
        case .webSocketVersion: return "upgrade-required"
        }
    }

    /// The metrics `outcome` label: the type suffix with `_` for `-`.
    public var outcomeLabel: String {
        String(typeSuffix.map { $0 == "-" ? "_" : $0 })
    }

    /// AF's error code, or the table's code for serializerd's own failures.
    public var code: Int {
        switch self {
        case .response(let error, _): return error.code
        case .upstreamUnavailable(let curlCode, _, _): return curlCode
        case .upstreamTimeout: return 28
        case .upstreamBodyTooLarge: return 63
        case .noRoute, .noSuchFailure, .noSuchStream: return 404
        case .methodNotAllowed: return 405
        case .invalidPath: return 400
        case .headersTooLarge: return 431
        case .forbidden: return 403
        case .misdirected: return 421
        case .badRequest: return -1016
        case .invalidQuery: return 400
        case .requestTooLarge: return 413
        case .unavailable, .overloaded: return 503
        case .circuitOpen: return -1004
        case .malformedRequest: return 400
        case .loopDetected: return 508
        case .replayMiss, .cacheMiss: return -1008
        case .injectedFault(let status, _): return status
        case .webSocketHandshake: return 400
        case .webSocketVersion: return 426
        }
    }

    public var title: String {
        switch self {
        case .response(let error, _): return error.title
        case .upstreamUnavailable: return "Could not connect to the server."
        case .upstreamTimeout: return "The request timed out."
        case .upstreamBodyTooLarge(let limit, _): return "The upstream response is larger than the limit of \(limit) bytes."
        case .noRoute: return "No route matches this request."
        case .methodNotAllowed: return "The route does not allow this method."
        case .invalidPath: return "The path escapes the route's base URL."
        case .headersTooLarge(let limit): return "The request headers are larger than the limit of \(limit) bytes."
        case .forbidden: return "Admin endpoints are not available to this client."
        case .misdirected: return "The request names a host that is not this serializerd."
        case .badRequest: return "The request body cannot be read as parameters."
        case .invalidQuery: return "The query string is not valid for this endpoint."
        case .requestTooLarge(let limit): return "The request body is larger than the limit of \(limit) bytes."
        case .unavailable: return "The server is shutting down."
        case .malformedRequest: return "The request is not valid HTTP/1.1."
        case .overloaded: return "The server holds too many response bytes right now; retry shortly."
        case .circuitOpen: return "The route's upstream failed repeatedly; its circuit breaker is open."
        case .loopDetected: return "The request has already passed through this serializerd."
        case .noSuchFailure: return "No failure with this request id is kept."
        case .noSuchStream: return "No events of a stream with this request id are kept."
        case .replayMiss: return "No recording on the route's tape matches this request."
        case .cacheMiss: return "The resource is not in the cache, and the request may not go to the upstream."
        case .injectedFault: return "A fault was injected in place of the upstream's answer."
        case .webSocketHandshake: return "The WebSocket handshake is not valid."
        case .webSocketVersion: return "The WebSocket version is not supported."
        }
    }

    /// The precise reason and, where configuration decided it, the setting to change.
    public var detail: String? {
        switch self {
        case .response(let error, _): return error.detail
        case .upstreamUnavailable(_, let message, _): return message
        case .upstreamTimeout(_, let seconds, true): return "no byte of the stream for \(Self.seconds(seconds)) s (stream.idle)"
        case .upstreamTimeout(_, let seconds, false): return "no complete response within \(Self.seconds(seconds)) s (the route's timeout, else timeouts.upstream)"
        case .upstreamBodyTooLarge(let limit, _): return "the body exceeds \(limit) bytes (limits.max_response_body)"
        case .invalidPath(let why), .badRequest(let why), .invalidQuery(let why), .malformedRequest(let why), .replayMiss(let why),
             .cacheMiss(let why), .injectedFault(_, let why), .webSocketHandshake(let why), .webSocketVersion(let why): return why
        case .methodNotAllowed(let allow): return "allowed: \(allow.joined(separator: ", ")) (the route's match.methods)"
        case .noRoute(let request): return "no route matches \(request); GET /-/routes lists the configured routes"
        case .headersTooLarge(let limit): return "the request head exceeds \(limit) bytes (limits.max_header_bytes)"
        case .requestTooLarge(let limit): return "the body exceeds \(limit) bytes (limits.max_request_body)"
        case .forbidden(nil): return "the client's address is not in admin.allow"
        case .forbidden(let host?):
            return "admin endpoints answer only to loopback names and addresses, the listen address and admin.hosts; "
                + "this request names Host '\(host)' (add the name to admin.hosts to allow it)"
        case .misdirected(let host):
            return "routes answer only to IP addresses, localhost, names under .localhost and the names in hosts; "
                + "this request names Host '\(host)' (add the name to hosts to allow it)"
        case .overloaded: return "response bytes held in memory reached limits.max_buffered_bytes"
        case .circuitOpen(let retryAfter, let failures, let window):
            return "\(failures) failed requests in a row within \(Self.seconds(window)) s (breaker.failures, breaker.window); "
                + "the next request goes to the upstream as a probe in \(Self.seconds((retryAfter * 10).rounded(.up) / 10)) s (breaker.open)"
        case .unavailable: return "in-flight requests are finishing (timeouts.shutdown_grace); new ones are refused"
        case .loopDetected: return "the request carries this daemon's own Via entry: a route's upstream points back at serializerd"
        case .noSuchStream(let id):
            return "no events for request id '\(id)' among the last \(StreamLog.streams) streams and WebSockets (they are kept only while /-/events has a subscriber, as the inspector is)"
        case .noSuchFailure(let id): return "no evidence for request id '\(id)' among the last \(FailureStore.capacity) failures (GET /-/failures lists them; admin.keep_failures turns keeping them on)"
        }
    }

    /// `30`, `0.25`: a duration as a user wrote it.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// What the problem document reports of the upstream response: the response, its URL as
/// shown (redacted by `capture`; none offline), and what the serializer still made of it.
public struct UpstreamEvidence: Sendable, Equatable {
    public var response: UpstreamResponse
    /// What the serializer could still make of the body (AF's object beside a status error).
    public var parsed: NormalizedJSON?

    public init(_ response: UpstreamResponse, shownURL: String?, parsed: NormalizedJSON?) {
        self.response = response
        self.response.url = shownURL ?? ""
        self.parsed = parsed
    }

    public var url: String? { response.url.isEmpty ? nil : response.url }
    public var status: Int { response.status }
    public var contentType: String? { response.contentType }
    public var body: [UInt8] {
        get { response.body }
        set { response.body = newValue }
    }
}
