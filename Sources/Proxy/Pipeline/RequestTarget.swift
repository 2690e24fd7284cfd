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
        if let scheme = ["https://", "http://"].first(where: { scheme in
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
        guard rest.first == "/" else { return nil }
        if let mark = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(rest[..<mark])
            query = String(rest[rest.index(after: mark)...])
        } else {
            path = String(rest)
            query = nil
        }
        self.host = host
    }
}
