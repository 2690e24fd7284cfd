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

/// OTLP's span kinds that serializerd makes.
public enum SpanKind: UInt8, Sendable {
    case `internal` = 1, server = 2, client = 3
}

/// A span's attributes as they are written: straight into the span's JSON, so a span keeps
/// no list of them (OTLP/JSON: `{"key":…,"value":{"stringValue":…}}`).
public struct SpanAttributes: ~Copyable {
    fileprivate var out: ByteWriter
    fileprivate var count = 0

    init(_ out: ByteWriter) { self.out = out }

    private mutating func key(_ key: StaticString) {
        out.raw(count == 0 ? #","attributes":[{"key":""# : #",{"key":""#)
        count += 1
        // Keys are the semantic conventions' names: nothing to escape.
        out.raw(key)
    }

    public mutating func add(_ key: StaticString, _ value: String) {
        self.key(key)
        out.raw(#"","value":{"stringValue":"#)
        out.string(value)
        out.raw("}}")
    }

    /// A value that is one string joined from two, with `separator` between them.
    public mutating func add(_ key: StaticString, _ first: String, _ separator: UInt8, _ second: String) {
        self.key(key)
        out.raw(#"","value":{"stringValue":"#)
        out.string(first, separator, second)
        out.raw("}}")
    }

    public mutating func add(_ key: StaticString, _ value: Int) {
        self.key(key)
        out.raw(#"","value":{"intValue":""#)
        if value < 0 { out.byte(UInt8(ascii: "-")) }
        out.decimal(UInt64(value.magnitude))
        out.raw("\"}}")
    }

    public mutating func add(_ key: StaticString, _ value: Bool) {
        self.key(key)
        out.raw(value ? #"","value":{"boolValue":true}}"# : #"","value":{"boolValue":false}}"#)
    }

    public mutating func add(contentsOf list: [SpanAttribute]) {
        for attribute in list {
            switch attribute.value {
            case .string(let s): add(attribute.key, s)
            case .int(let n): add(attribute.key, n)
            case .bool(let b): add(attribute.key, b)
            }
        }
    }

    /// Attributes written once ahead (`SpanAttributes.encode`): a route's own, say.
    public mutating func add(encoded: EncodedAttributes) {
        guard encoded.count > 0 else { return }
        out.raw(count == 0 ? #","attributes":["# : ",")
        count += encoded.count
        encoded.bytes.withUnsafeBufferPointer { out.bytes($0) }
    }

    consuming func finish() -> ByteWriter {
        if count > 0 { out.byte(UInt8(ascii: "]")) }
        return out
    }
}

/// Attributes encoded once, to be added to many spans as they are.
public struct EncodedAttributes: Sendable {
    fileprivate let bytes: [UInt8]
    fileprivate let count: Int

    public init(_ attributes: [SpanAttribute]) {
        var writer = SpanAttributes(ByteWriter(capacity: 64 * attributes.count))
        writer.add(contentsOf: attributes)
        count = writer.count
        var out = writer.finish()
        let all = out.finish()
        // What `add(encoded:)` appends: the attribute objects alone, without the member
        // name before the first or the list's closing bracket.
        let prefix = #","attributes":["#.utf8.count
        bytes = count == 0 ? [] : Array(all[prefix..<(all.count - 1)])
    }
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
