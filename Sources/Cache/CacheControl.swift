/// The Cache-Control directives a shared cache acts on (RFC 9111 §5.2), from a request's
/// or a response's field lines. Names compare case-insensitively; a value may be a token
/// or a quoted string. Unknown directives are ignored, as the RFC asks.
public struct CacheControl: Sendable, Equatable {
    /// What RFC 9111 §1.2.2 says a cache takes for a delta-seconds it cannot represent.
    public static let maxSeconds = 2_147_483_648

    /// How a delta-seconds directive was given.
    public enum Seconds: Sendable, Equatable {
        case absent
        case value(Int)
        /// Present without a usable number (`max-age=abc`, `max-age=-1`, or given twice
        /// with different values): a cache treats such a response as stale.
        case invalid

        public var value: Int? { if case .value(let v) = self { v } else { nil } }
        public var isPresent: Bool { self != .absent }
    }

    public var maxAge = Seconds.absent
    public var sMaxAge = Seconds.absent
    /// Request: how stale an answer the client accepts; `max-stale` without a value is any.
    public var maxStale = Seconds.absent
    public var maxStaleAny = false
    public var minFresh = Seconds.absent
    public var staleIfError = Seconds.absent
    public var noStore = false
    /// `no-cache`, with or without field names (a shared cache treats both alike).
    public var noCache = false
    public var isPrivate = false
    public var isPublic = false
    public var mustRevalidate = false
    public var proxyRevalidate = false
    public var onlyIfCached = false
    public var noTransform = false

    public init() {}

    /// The directives of every field line given (a field may be split over several).
    public init(_ lines: [String]) {
        for line in lines { parse(Array(line.utf8)) }
    }

    private mutating func parse(_ b: [UInt8]) {
        var k = 0
        let n = b.count
        func skipSpace() { while k < n && (b[k] == 0x20 || b[k] == 0x09) { k += 1 } }
        while k < n {
            skipSpace()
            let nameStart = k
            while k < n && isToken(b[k]) { k += 1 }
            let name = b[nameStart..<k].map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }
            skipSpace()
            var value: [UInt8]?
            if k < n && b[k] == UInt8(ascii: "=") {
                k += 1
                skipSpace()
                if k < n && b[k] == UInt8(ascii: "\"") {
                    k += 1
                    var v: [UInt8] = []
                    while k < n && b[k] != UInt8(ascii: "\"") {
                        if b[k] == UInt8(ascii: "\\") && k + 1 < n { k += 1 }
                        v.append(b[k])
                        k += 1
                    }
                    if k < n { k += 1 }
                    value = v
                } else {
                    let valueStart = k
                    while k < n && isToken(b[k]) { k += 1 }
                    value = Array(b[valueStart..<k])
                }
                skipSpace()
            }
            // Anything else up to the next comma outside quotes is not part of a directive.
            var quoted = false
            while k < n && (quoted || b[k] != UInt8(ascii: ",")) {
                if b[k] == UInt8(ascii: "\"") { quoted.toggle() } else if quoted && b[k] == UInt8(ascii: "\\") { k += 1 }
                k += 1
            }
            if k < n { k += 1 }
            apply(name, value)
        }
    }

    private mutating func apply(_ name: [UInt8], _ value: [UInt8]?) {
        switch String(decoding: name, as: UTF8.self) {
        case "max-age": Self.merge(&maxAge, value)
        case "s-maxage": Self.merge(&sMaxAge, value)
        case "max-stale":
            if value == nil { maxStaleAny = true } else { Self.merge(&maxStale, value) }
        case "min-fresh": Self.merge(&minFresh, value)
        case "stale-if-error": Self.merge(&staleIfError, value)
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "only-if-cached": onlyIfCached = true
        case "no-transform": noTransform = true
        default: break
        }
    }

    /// A second occurrence with another value makes the directive invalid (RFC 9111
    /// §4.2.1: use the first, or consider the response stale; a shared cache takes stale).
    private static func merge(_ slot: inout Seconds, _ value: [UInt8]?) {
        let parsed = seconds(value)
        switch slot {
        case .absent: slot = parsed
        case parsed: break
        default: slot = .invalid
        }
    }

    /// delta-seconds (1*DIGIT), clamped to 2^31; anything else is invalid.
    static func seconds(_ value: [UInt8]?) -> Seconds {
        guard let value, !value.isEmpty else { return .invalid }
        var v = 0
        for c in value {
            let d = c &- 0x30
            guard d < 10 else { return .invalid }
            v = min(v * 10 + Int(d), maxSeconds)
        }
        return .value(v)
    }

    /// RFC 9110 tchar.
    private func isToken(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
