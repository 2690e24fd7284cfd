import HTTPCore

/// What one request asks for by `Serializerd-Fault` (DESIGN §3): conditions of its own
/// (over the route's) and at most one fault.
public struct FaultRequest: Sendable, Equatable {
    public var latency: Double?
    public var jitter: Double?
    public var down: Int?
    public var up: Int?
    public var fault: Fault?

    public init() {}

    /// `latency=800ms; down=50KiB; status=503` (or `reset`, `timeout`, `truncate`).
    public static func parse(_ text: String) throws(NetworkSyntaxError) -> FaultRequest {
        var request = FaultRequest()
        func set(_ fault: Fault) throws(NetworkSyntaxError) {
            guard request.fault == nil else { throw NetworkSyntaxError("more than one fault (reset, timeout, truncate, status)") }
            request.fault = fault
        }
        for (name, value) in try Directives.parse(text) {
            switch name {
            case "latency": request.latency = try duration(name, value)
            case "jitter": request.jitter = try duration(name, value)
            case "down": request.down = try rate(name, value)
            case "up": request.up = try rate(name, value)
            case "status":
                guard let value, let code = Int(value), Fault.statuses.contains(code) else {
                    throw NetworkSyntaxError("status needs a code from \(Fault.statuses.lowerBound) to \(Fault.statuses.upperBound): status=503")
                }
                try set(.status(code))
            case "reset", "timeout", "truncate":
                guard value == nil else { throw NetworkSyntaxError("\(name) takes no value") }
                try set(name == "reset" ? .reset : name == "timeout" ? .timeout : .truncate)
            default:
                throw NetworkSyntaxError("unknown fault directive '\(name)' (latency, jitter, down, up, status, reset, timeout, truncate)")
            }
        }
        return request
    }

    static func duration(_ name: String, _ value: String?) throws(NetworkSyntaxError) -> Double {
        guard let value, let seconds = value == "0" ? 0 : Units.seconds(value), seconds >= 0 else {
            throw NetworkSyntaxError("\(name) needs a duration like 800ms or 2s")
        }
        return seconds
    }

    static func rate(_ name: String, _ value: String?) throws(NetworkSyntaxError) -> Int {
        guard let value, let bytes = Units.bytes(value), bytes > 0 else {
            throw NetworkSyntaxError("\(name) needs bytes per second like 50KiB or 2MiB")
        }
        return bytes
    }

    /// The route's settings with this request's over them.
    public func over(_ settings: NetworkSettings) -> NetworkSettings {
        var s = settings
        if let latency { s.latency = latency }
        if let jitter { s.jitter = jitter }
        if let down { s.down = down }
        if let up { s.up = up }
        return s
    }
}
