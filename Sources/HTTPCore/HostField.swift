/// The `Host` field: `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2). Checked
/// byte by byte, without allocating, on every request.
public enum HostField {
    /// Where the host ends and the port begins in a valid value; nil when the value is
    /// not `uri-host[:port]`. An empty value is valid (RFC 9112 §3.2: a target without
    /// an authority). A port is 1–5 digits up to 65535; `host:` (empty port) is allowed,
    /// as RFC 3986 allows it.
    public static func split(_ v: UnsafeBufferPointer<UInt8>) -> (hostEnd: Int, portStart: Int?)? {
        var i = 0
        if v.first == UInt8(ascii: "[") {
            // IP-literal: an IPv6 address (or IPvFuture) in brackets, checked by character set
            // here and by inet_pton where the address is used.
            i = 1
            while i < v.count && v[i] != UInt8(ascii: "]") {
                guard isHex(v[i]) || v[i] == UInt8(ascii: ":") || v[i] == UInt8(ascii: ".") else { return nil }
                i += 1
            }
            guard i < v.count, i > 1 else { return nil }
            i += 1
        } else {
            while i < v.count && v[i] != UInt8(ascii: ":") {
                let c = v[i]
                if c == UInt8(ascii: "%") {
                    guard i + 2 < v.count, isHex(v[i + 1]), isHex(v[i + 2]) else { return nil }
                    i += 3
                    continue
                }
                guard isRegName(c) else { return nil }
                i += 1
            }
        }
        let hostEnd = i
        guard i < v.count else { return (hostEnd, nil) }
        guard v[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        guard v.count - i <= 5 else { return nil }
        var port = 0
        for k in i..<v.count {
            guard v[k] >= 0x30 && v[k] <= 0x39 else { return nil }
            port = port * 10 + Int(v[k] - 0x30)
        }
        guard port <= 65535 else { return nil }
        return (hostEnd, i)
    }

    public static func isValid(_ value: UnsafeBufferPointer<UInt8>) -> Bool { split(value) != nil }

    /// The host of a valid value, lowercased, brackets and one trailing dot removed:
    /// `LOCALHOST.:8080` → `localhost`, `[::1]:80` → `::1`. nil when the value is invalid.
    public static func name(_ value: String) -> String? {
        var value = value
        return value.withUTF8 { v -> String? in
            guard let (hostEnd, _) = split(v) else { return nil }
            var host = Array(v[0..<hostEnd])
            if host.first == UInt8(ascii: "[") { host = Array(host.dropFirst().dropLast()) }
            if host.last == UInt8(ascii: ".") { host.removeLast() }
            for k in host.indices where host[k] >= 0x41 && host[k] <= 0x5A { host[k] |= 0x20 }
            return String(decoding: host, as: UTF8.self)
        }
    }

    /// Whether a valid value's host is one no page on the web can be given (DNS
    /// rebinding, DESIGN §4): an IP literal (an IPv6 address in brackets, or only digits
    /// and dots),
    /// `localhost`, or a name under `.localhost` — any case, one trailing dot ignored.
    /// Byte by byte and without allocating: every origin-form request asks it.
    public static func isLocalOrLiteral(_ v: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let (hostEnd, _) = split(v) else { return false }
        return isLocalOrLiteral(v, hostEnd: hostEnd)
    }

    /// The same for a value already known to be valid (the parser checked it): where the
    /// host ends is found without checking it again.
    public static func isLocalOrLiteral(validated v: UnsafeBufferPointer<UInt8>) -> Bool {
        var hostEnd = 0
        if v.first == UInt8(ascii: "[") {
            while hostEnd < v.count && v[hostEnd] != UInt8(ascii: "]") { hostEnd += 1 }
            hostEnd = min(hostEnd + 1, v.count)
        } else {
            while hostEnd < v.count && v[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        }
        return isLocalOrLiteral(v, hostEnd: hostEnd)
    }

    static func isLocalOrLiteral(_ v: UnsafeBufferPointer<UInt8>, hostEnd: Int) -> Bool {
        guard hostEnd > 0 else { return false }
        // A bracketed literal is an IPv6 address (it has a colon), nothing else.
        if v[0] == UInt8(ascii: "[") { return UnsafeBufferPointer(rebasing: v[0..<hostEnd]).contains(UInt8(ascii: ":")) }
        var end = hostEnd
        if v[end - 1] == UInt8(ascii: ".") { end -= 1 }
        var literal = end > 0
        for k in 0..<end where !(v[k] >= 0x30 && v[k] <= 0x39 || v[k] == UInt8(ascii: ".")) {
            literal = false
            break
        }
        if literal { return true }
        // `localhost`, or a name ending in `.localhost`.
        let suffix: StaticString = "localhost"
        let n = suffix.utf8CodeUnitCount
        guard end >= n, end == n || v[end - n - 1] == UInt8(ascii: ".") else { return false }
        for k in 0..<n where v[end - n + k] | 0x20 != suffix.utf8Start[k] { return false }
        return true
    }

    static func isHex(_ c: UInt8) -> Bool { Hex.value(c) != nil }

    /// unreserved / sub-delims (RFC 3986): what a reg-name or IPv4 address is made of,
    /// besides percent-escapes.
    static func isRegName(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        default: false
        }
    }
}
