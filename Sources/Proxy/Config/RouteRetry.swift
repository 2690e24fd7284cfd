import HTTPCore
import Resilience
import Upstream

/// `retry:` of a route (DESIGN §11): which failures of an idempotent request are sent
/// again, how many times, how long between, and the share of the route's requests its
/// retries may add.
public struct RouteRetry: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var attempts = 3
    public var on: Set<Condition> = [.connect, .reset, .timeout, .status(502), .status(503), .status(504)]
    /// The first backoff's ceiling, doubled each retry up to `maxBackoff` (full jitter).
    public var backoff = 0.1
    public var maxBackoff = 2.0
    /// Retries stay under this percent of the route's requests (at least 3 a second).
    public var budget = 10.0

    public enum Condition: Hashable, Sendable, CustomStringConvertible {
        /// The connection could not be made (refused, DNS).
        case connect
        /// The connection broke before the whole answer came.
        case reset
        /// No whole answer within the route timeout.
        case timeout
        case status(Int)

        public var description: String {
            switch self {
            case .connect: "connect"
            case .reset: "reset"
            case .timeout: "timeout"
            case .status(let code): String(code)
            }
        }
    }

    static let maxAttempts = 10
    static let retryableStatuses: ClosedRange<Int> = 400...599

    /// The condition an attempt's outcome meets among `on`, nil when it is not retried.
    func reason(for result: Result<UpstreamResponse, UpstreamFailure>) -> Condition? {
        let condition: Condition
        switch result {
        case .success(let reply): condition = .status(reply.status)
        case .failure(.timeout): condition = .timeout
        case .failure(.unavailable(let code, _)):
            // libcurl: 5-7 resolving or connecting; 52, 55, 56 nothing or a broken send or read.
            switch code {
            case 5, 6, 7: condition = .connect
            case 52, 55, 56: condition = .reset
            default: return nil
            }
        case .failure: return nil
        }
        return on.contains(condition) ? condition : nil
    }
}

extension ConfigLoader {
    static func routeRetry(_ node: ConfigNode?) throws(ConfigError) -> RouteRetry? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["attempts", "on", "backoff", "max_backoff", "budget"])
        var retry = RouteRetry()
        if let n = m["attempts"] { retry.attempts = try n.int(in: 2...RouteRetry.maxAttempts) }
        if let n = m["on"] {
            var conditions: Set<RouteRetry.Condition> = []
            for item in try n.sequence() {
                let text = try item.string()
                switch text {
                case "connect": conditions.insert(.connect)
                case "reset": conditions.insert(.reset)
                case "timeout": conditions.insert(.timeout)
                default:
                    guard let code = Int(text), RouteRetry.retryableStatuses.contains(code) else {
                        throw item.error("expected connect, reset, timeout or a status from 400 to 599, found '\(text)'")
                    }
                    conditions.insert(.status(code))
                }
            }
            guard !conditions.isEmpty else { throw n.error("expected at least one condition to retry on") }
            retry.on = conditions
        }
        if let n = m["backoff"] { retry.backoff = try n.seconds() }
        if let n = m["max_backoff"] { retry.maxBackoff = try n.seconds() }
        guard retry.maxBackoff >= retry.backoff else {
            throw (m["max_backoff"] ?? node).error("max_backoff must be at least backoff")
        }
        guard retry.maxBackoff <= 60 else { throw (m["max_backoff"] ?? m["backoff"] ?? node).error("expected at most 60s") }
        if let n = m["budget"] {
            let text = try n.string()
            guard text.hasSuffix("%"), let percent = Double(text.dropLast()), percent >= 0, percent <= 100 else {
                throw n.error("expected a share of the route's requests such as 10%, found '\(text)'")
            }
            retry.budget = percent
        }
        return retry
    }
}
