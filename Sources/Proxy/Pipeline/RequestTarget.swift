/// The request-target split into what routing needs (DESIGN §4).
struct RequestTarget {
    /// Lowercased `host[:port]` for absolute-form requests (default port dropped).
    let host: String?
    let path: String
    let query: String?

    init?(_ target: String) {
        var rest = Substring(target)
        var host: String?
        // ASCII case-insensitive: `| 0x20` lowercases letters and leaves ":" and "/" alone.
        // Origin-form, nearly every request, never names a scheme.
        if target.utf8.first != UInt8(ascii: "/"), let scheme = ["https://", "http://"].first(where: { scheme in
            target.utf8.count >= scheme.utf8.count && zip(target.utf8, scheme.utf8).allSatisfy { $0 | 0x20 == $1 }
        }) {
            rest = rest.dropFirst(scheme.count)
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            var authority = rest[..<end].lowercased()
            let defaultPort = scheme == "http://" ? ":80" : ":443"
            if authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
            guard !authority.isEmpty, !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
            host = authority
            rest = rest[end...]
            if rest.isEmpty || rest.first == "?" { rest = "/" + rest }
        }
        guard rest.utf8.first == UInt8(ascii: "/") else { return nil }
        if host == nil {
            // Origin-form, on the target's bytes; without a query the path is the target itself.
            var target = target
            let split = target.withUTF8 { bytes -> (String, String)? in
                guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
                return (String(decoding: UnsafeBufferPointer(rebasing: bytes[..<mark]), as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(rebasing: bytes[(mark + 1)...]), as: UTF8.self))
            }
            (path, query) = split.map { ($0.0, $0.1) } ?? (target, nil)
        } else if let mark = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(rest[..<mark])
            query = String(rest[rest.utf8.index(after: mark)...])
        } else {
            path = String(rest)
            query = nil
        }
        self.host = host
    }
}
