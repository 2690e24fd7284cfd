import HTTPCore

/// Pauses an upstream asks for in its answer (DESIGN §11), read from the fields as sent:
/// `Retry-After` on a 429 or 503 (seconds, or an HTTP-date); a `RateLimit` field with a
/// policy at `r=0` and its `t` (draft-ietf-httpapi-ratelimit-headers, a structured-field
/// list); `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset` (epoch seconds above 10^9,
/// else seconds from now). The longest one wins; none is longer than `maxSeconds`.
public enum PauseSignal {
    /// The longest pause taken from an upstream: an hour.
    public static let maxSeconds = 3_600.0
    /// `X-RateLimit-Reset` values above this are epoch seconds.
    static let epochThreshold = 1_000_000_000.0

    /// Where a pause came from, for `serializerd_rate_limited_total{source}` and events.
    public enum Source: String, Sendable {
        case retryAfter = "retry_after", rateLimit = "ratelimit", xRateLimit = "x_ratelimit"
    }

    /// The fields that can ask for a pause: an answer without any of them (most) is passed
    /// over by one test of each field name's length.
    static let askingFields = HeaderNames(["Retry-After", "RateLimit", "X-RateLimit-Remaining"])

    /// Whether `headers` has a field that may ask for a pause (then `pause` reads them).
    public static func mayAsk(_ headers: HeaderFields) -> Bool { headers.contains(any: askingFields) }

    /// Seconds to pause from `wallNow` (the wall clock, for dates and epoch resets), and
    /// which field asked; nil when no field asks for a pause.
    public static func pause(status: Int, headers: HeaderFields, wallNow: Double) -> (seconds: Double, source: Source)? {
        var best: (seconds: Double, source: Source)?
        func offer(_ seconds: Double?, _ source: Source) {
            guard let seconds, seconds > 0 else { return }
            let bounded = min(seconds, maxSeconds)
            if best == nil || bounded > best!.seconds { best = (bounded, source) }
        }
        if status == 429 || status == 503, let value = headers.first("Retry-After") {
            offer(retryAfter(value, wallNow: wallNow), .retryAfter)
        }
        let policies = headers.values("RateLimit")
        if !policies.isEmpty { offer(rateLimit(policies.joined(separator: ",")), .rateLimit) }
        if let remaining = headers.first("X-RateLimit-Remaining"), integer(remaining) == 0,
           let reset = headers.first("X-RateLimit-Reset").flatMap(integer) {
            let seconds = Double(reset) > epochThreshold ? Double(reset) - wallNow : Double(reset)
            offer(seconds, .xRateLimit)
        }
        return best
    }

    /// `Retry-After`: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
    public static func retryAfter(_ value: String, wallNow: Double) -> Double? {
        if let seconds = integer(value) { return Double(seconds) }
        return HTTPDate.seconds(value, now: wallNow).map { $0 - wallNow }
    }

    /// A non-negative decimal integer with optional surrounding spaces, saturating at 10^15
    /// (any pause that long is cut to `maxSeconds` anyway).
    static func integer(_ text: String) -> Int? {
        var value = 0, digits = 0, trailing = false
        for c in text.utf8 {
            if c == 0x20 || c == 0x09 {
                if digits > 0 { trailing = true }
                continue
            }
            guard !trailing, c >= 0x30, c <= 0x39 else { return nil }
            value = min(value * 10 + Int(c - 0x30), 1_000_000_000_000_000)
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The longest `t` of the policies at `r=0` in a `RateLimit` list: members separated by
    /// commas, each an item (a token or a quoted string) with `;key=value` parameters.
    /// What does not read as such is skipped up to the next comma outside quotes.
    static func rateLimit(_ field: String) -> Double? {
        let b = Array(field.utf8)
        var i = 0, longest: Double?
        func skipSpaces() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 } }
        // To the member's end: the next comma outside a quoted string.
        func skipMember() {
            var quoted = false
            while i < b.count {
                let c = b[i]
                if quoted {
                    if c == 0x5C { i += 1 } else if c == 0x22 { quoted = false }
                } else if c == 0x22 {
                    quoted = true
                } else if c == 0x2C {
                    return
                }
                i += 1
            }
        }
        func isKeyByte(_ c: UInt8) -> Bool { (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x2A }
        while i < b.count {
            skipSpaces()
            // The item: a quoted string or a token; its value does not matter here.
            if i < b.count, b[i] == 0x22 {
                i += 1
                while i < b.count, b[i] != 0x22 {
                    if b[i] == 0x5C { i += 1 }
                    i += 1
                }
                i += 1
            } else {
                while i < b.count, b[i] != 0x3B, b[i] != 0x2C { i += 1 }
            }
            var r: Int?, t: Int?
            while i < b.count, b[i] == 0x3B {
                i += 1
                skipSpaces()
                let keyStart = i
                while i < b.count, isKeyByte(b[i]) { i += 1 }
                let key = b[keyStart..<i]
                var number: Int?
                if i < b.count, b[i] == 0x3D {
                    i += 1
                    let valueStart = i
                    while i < b.count, b[i] >= 0x30, b[i] <= 0x39, i - valueStart < 15 { i += 1 }
                    if i > valueStart, i == b.count || b[i] == 0x3B || b[i] == 0x2C || b[i] == 0x20 || b[i] == 0x09 {
                        number = b[valueStart..<i].reduce(0) { $0 * 10 + Int($1 - 0x30) }
                    }
                }
                if key.elementsEqual("r".utf8) { r = number } else if key.elementsEqual("t".utf8) { t = number }
                skipSpaces()
                if i < b.count, b[i] != 0x3B, b[i] != 0x2C { break }
            }
            if r == 0, let t { longest = max(longest ?? 0, Double(t)) }
            skipMember()
            i += 1   // past the comma
        }
        return longest
    }
}
