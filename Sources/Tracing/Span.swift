/// One attribute of a span or event: OpenTelemetry's semantic-convention name and its value.
public struct SpanAttribute: Sendable {
    public enum Value: Sendable {
        case string(String)
        case int(Int)
        case bool(Bool)
    }

    public let key: StaticString
    public let value: Value

    public init(_ key: StaticString, _ value: String) { self.key = key; self.value = .string(value) }
    public init(_ key: StaticString, _ value: Int) { self.key = key; self.value = .int(value) }
    public init(_ key: StaticString, _ value: Bool) { self.key = key; self.value = .bool(value) }
}

/// Something that happened at a moment of a span: a fault, a retry, a stale answer.
public struct SpanEvent: Sendable {
    public let name: StaticString
    /// Nanoseconds since the Unix epoch.
    public let time: UInt64
    public let attributes: [SpanAttribute]

    public init(name: StaticString, time: UInt64, attributes: [SpanAttribute] = []) {
        self.name = name
        self.time = time
        self.attributes = attributes
    }
}

/// One finished span. Times are nanoseconds since the Unix epoch.
public struct SpanRecord: Sendable {
    /// OTLP's span kinds that serializerd makes.
    public enum Kind: UInt8, Sendable {
        case `internal` = 1, server = 2, client = 3
    }

    public var name: String
    public var kind: Kind
    public var spanID: UInt64
    public var start: UInt64
    public var end: UInt64
    public var attributes: [SpanAttribute]
    public var events: [SpanEvent]
    /// Set when the span failed: OTLP's status `ERROR` with this message.
    public var error: String?

    public init(name: String, kind: Kind, spanID: UInt64, start: UInt64, end: UInt64, attributes: [SpanAttribute] = [],
                events: [SpanEvent] = [], error: String? = nil) {
        self.name = name
        self.kind = kind
        self.spanID = spanID
        self.start = start
        self.end = end
        self.attributes = attributes
        self.events = events
        self.error = error
    }
}

/// A request's spans once it is answered: the `SERVER` span (a child of the client's span
/// when it sent a `traceparent`) and its children.
public struct FinishedTrace: Sendable {
    public var traceHigh: UInt64
    public var traceLow: UInt64
    /// The client's span, or 0 when the trace began here.
    public var parentSpanID: UInt64
    /// The client's `tracestate`, kept on the `SERVER` span.
    public var traceState: String?
    public var server: SpanRecord
    public var children: [SpanRecord]

    public init(traceHigh: UInt64, traceLow: UInt64, parentSpanID: UInt64, traceState: String?, server: SpanRecord,
                children: [SpanRecord]) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.parentSpanID = parentSpanID
        self.traceState = traceState
        self.server = server
        self.children = children
    }

    public var spanCount: Int { 1 + children.count }
}

/// Random ids for traces and spans: a worker's own xoshiro256** generator, seeded from
/// the system's, so a request costs no system call and no lock. Never zero.
public struct TraceIDSource {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    public init() {
        var system = SystemRandomNumberGenerator()
        s = (system.next(), system.next(), system.next(), system.next() | 1)
    }

    public mutating func next() -> UInt64 {
        while true {
            let result = rotl(s.1 &* 5, 7) &* 9
            let t = s.1 << 17
            s.2 ^= s.0
            s.3 ^= s.1
            s.1 ^= s.2
            s.0 ^= s.3
            s.2 ^= t
            s.3 = rotl(s.3, 45)
            if result != 0 { return result }
        }
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// A draw in [0, 1) for sampling.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
