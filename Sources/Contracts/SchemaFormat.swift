/// The formats DESIGN §10 asserts.
enum SchemaFormat: String, Sendable {
    case dateTime = "date-time", date, time, email, uri, uuid, ipv4, ipv6

    func accepts(_ s: String) -> Bool { accepts(Array(s.utf8)) }

    func accepts(_ b: [UInt8]) -> Bool {
        switch self {
        case .date: return Self.date(b[...])
        case .time: return Self.time(b[...]) != nil
        case .dateTime:
            guard let t = b.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }), t == 10 else { return false }
            return Self.date(b[..<t]) && Self.time(b[(t + 1)...]) != nil
        case .email: return Self.email(b)
        case .uri: return Self.uri(b)
        case .uuid: return Self.uuid(b)
        case .ipv4: return Self.ipv4(b[...])
        case .ipv6: return Self.ipv6(b)
        }
    }

    static func digits(_ b: ArraySlice<UInt8>) -> Int? {
        guard !b.isEmpty, b.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return b.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// RFC 3339 full-date.
    static func date(_ b: ArraySlice<UInt8>) -> Bool {
        let b = Array(b)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = digits(b[0..<4]), let m = digits(b[5..<7]), let d = digits(b[8..<10]), (1...12).contains(m) else { return false }
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        return (1...days).contains(d)
    }

    /// RFC 3339 full-time (an offset is required); a leap second only at 23:59:60 UTC.
    /// Returns the time in seconds of the UTC day.
    static func time(_ b: ArraySlice<UInt8>) -> Int? {
        let b = Array(b)
        guard b.count >= 9, b[2] == UInt8(ascii: ":"), b[5] == UInt8(ascii: ":"),
              let h = digits(b[0..<2]), let m = digits(b[3..<5]), let s = digits(b[6..<8]), h < 24, m < 60, s <= 60 else { return nil }
        var i = 8
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard b.count - i == 6, b[i + 3] == UInt8(ascii: ":"), let oh = digits(b[(i + 1)..<(i + 3)]), let om = digits(b[(i + 4)..<(i + 6)]),
                  oh < 24, om < 60 else { return nil }
            offset = (oh * 60 + om) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let utcMinutes = ((h * 60 + m - offset) % 1440 + 1440) % 1440
        if s == 60 && utcMinutes != 23 * 60 + 59 { return nil }
        return utcMinutes * 60 + s
    }

    static func uuid(_ b: [UInt8]) -> Bool {
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) { guard c == UInt8(ascii: "-") else { return false }; continue }
            guard isHex(c) else { return false }
        }
        return true
    }

    static func isHex(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66) }

    static func ipv4(_ b: ArraySlice<UInt8>) -> Bool {
        let parts = b.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            guard part.count <= 3, let n = digits(part), n <= 255 else { return false }
            return part.count == 1 || part.first != 0x30
        }
    }

    static func ipv6(_ b: [UInt8]) -> Bool {
        guard !b.isEmpty, b.allSatisfy({ isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
        var groups = b.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var count = 0
        // An IPv4 address may end it, worth two groups.
        if let last = groups.last, last.contains(UInt8(ascii: ".")) {
            guard ipv4(last) else { return false }
            groups.removeLast()
            groups.append([0x30])
            count += 1
        }
        let text = String(decoding: b, as: UTF8.self)
        let compressions = text.components(separatedByDoubleColon: ())
        guard compressions <= 1, !text.contains(":::") else { return false }
        // Empty groups come only from "::" (two at an end, three for "::" alone).
        var empties = 0
        for group in groups {
            if group.isEmpty {
                empties += 1
                if compressions == 0 { return false }
                continue
            }
            guard group.count <= 4, group.allSatisfy(isHex) else { return false }
            count += 1
        }
        if compressions == 0 { return count == 8 }
        if b.first == UInt8(ascii: ":"), b.count > 1, b[1] != UInt8(ascii: ":") { return false }
        if b.last == UInt8(ascii: ":"), b.count > 1, b[b.count - 2] != UInt8(ascii: ":") { return false }
        return count <= 7 && empties >= 1
    }

    /// RFC 5321 mailbox, simply: a dot-atom or quoted local part, a host name or an
    /// address literal.
    static func email(_ b: [UInt8]) -> Bool {
        guard let at = b.lastIndex(of: UInt8(ascii: "@")), at > 0, at < b.count - 1 else { return false }
        let local = b[..<at], domain = b[(at + 1)...]
        if local.first == UInt8(ascii: "\""), local.last == UInt8(ascii: "\""), local.count >= 2 {
            // A quoted string.
        } else {
            let atext = Set("!#$%&'*+-/=?^_`{|}~".utf8)
            guard local.first != UInt8(ascii: "."), local.last != UInt8(ascii: "."),
                  !zip(local, local.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }),
                  local.allSatisfy({ isAlnum($0) || atext.contains($0) || $0 == UInt8(ascii: ".") || $0 >= 0x80 }) else { return false }
        }
        if domain.first == UInt8(ascii: "["), domain.last == UInt8(ascii: "]") {
            let inner = domain.dropFirst().dropLast()
            if inner.starts(with: Array("IPv6:".utf8)) { return ipv6(Array(inner.dropFirst(5))) }
            return ipv4(inner)
        }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "-") || $0 >= 0x80 }
        }
    }

    static func isAlnum(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) }

    /// RFC 3986 URI (absolute, a fragment allowed): a scheme, then only characters a URI
    /// may hold and well-formed percent escapes.
    static func uri(_ b: [UInt8]) -> Bool {
        guard let colon = b.firstIndex(of: UInt8(ascii: ":")), colon > 0, b[0] | 0x20 >= 0x61, b[0] | 0x20 <= 0x7A,
              b[..<colon].allSatisfy({ isAlnum($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else { return false }
        let allowed = Set("-._~!$&'()*+,;=:@/?#[]".utf8)
        var i = colon + 1
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < b.count, isHex(b[i + 1]), isHex(b[i + 2]) else { return false }
                i += 3
                continue
            }
            guard isAlnum(c) || allowed.contains(c) else { return false }
            i += 1
        }
        // Brackets only around an IP literal host; a port is digits.
        var rest = b[(colon + 1)...]
        if rest.starts(with: Array("//".utf8)) {
            let authority = rest.dropFirst(2).prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            rest = rest[authority.endIndex...]
            var hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
            let userinfo = authority[..<hostPort.startIndex]
            if userinfo.contains(UInt8(ascii: "[")) || userinfo.contains(UInt8(ascii: "]")) { return false }
            if hostPort.first == UInt8(ascii: "[") {
                guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")), ipv6(Array(hostPort[hostPort.index(after: hostPort.startIndex)..<close])) else { return false }
                hostPort = hostPort[hostPort.index(after: close)...]
            }
            if hostPort.contains(UInt8(ascii: "[")) || hostPort.contains(UInt8(ascii: "]")) { return false }
            if let portColon = hostPort.firstIndex(of: UInt8(ascii: ":")) {
                let port = hostPort[hostPort.index(after: portColon)...]
                guard port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            }
        }
        let path = rest.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return !path.contains(UInt8(ascii: "[")) && !path.contains(UInt8(ascii: "]"))
    }
}

private extension String {
    /// How many times "::" occurs.
    func components(separatedByDoubleColon _: ()) -> Int {
        let b = Array(utf8)
        var n = 0, i = 0
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: ":") && b[i + 1] == UInt8(ascii: ":") { n += 1; i += 2 } else { i += 1 }
        }
        return n
    }
}
