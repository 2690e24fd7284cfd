/// A route's network conditions (DESIGN §2, §3): how its replies are slowed, which faults
/// replace some exchanges, and how its upstream's answers are damaged before the serializer.
public struct NetworkSettings: Sendable, Equatable {
    /// Seconds added before the first byte of each reply.
    public var latency: Double = 0
    /// Up to this many seconds more or less than `latency`, drawn per request.
    public var jitter: Double = 0
    /// Bytes per second of each reply to the client; nil = unshaped.
    public var down: Int?
    /// Bytes per second of the client's request body; nil = unshaped.
    public var up: Int?
    /// The share of requests that get one of `faults` instead of their exchange.
    public var failRate: Double = 0
    public var faults: [Fault] = []
    /// Makes the fault sequence reproducible (per worker).
    public var seed: UInt64?
    /// Clients in `admin.allow` may ask for faults and chaos per request by header.
    public var headerControl = false
    /// Applied to every upstream answer of the route, before its serializer.
    public var chaos: [ChaosOperation] = []

    public init() {}
}
