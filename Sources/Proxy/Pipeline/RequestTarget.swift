/// The request-target split into what routing needs (DESIGN §4).
struct RequestTarget {
    /// Lowercased `host[:port]` for absolute-form requests (default port dropped).
    let host: String?
    let path: String
    let query: String?

    init?(_ target: String) {
        var rest = Substring(target)
        var host: String?
        if let scheme = ["http://", "https://"].first(where: { target.lowercased().hasPrefix($0) }) {
            rest = rest.dropFirst(scheme.count)
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            var authority = rest[..<end].lowercased()
            let defaultPort = scheme == "http://" ? ":80" : ":443"
            if authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
            guard !authority.isEmpty, !authority.contains("@") else { return nil }
            host = authority
            rest = rest[end...]
            if rest.isEmpty || rest.first == "?" { rest = "/" + rest }
        }
        guard rest.first == "/" else { return nil }
        if let mark = rest.firstIndex(of: "?") {
            path = String(rest[..<mark])
            query = String(rest[rest.index(after: mark)...])
        } else {
            path = String(rest)
            query = nil
        }
        self.host = host
    }
}
