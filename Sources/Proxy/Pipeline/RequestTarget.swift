/// The request-target split into what routing needs (DESIGN §4).
struct RequestTarget {
    /// Lowercased `host[:port]` for absolute-form requests (default port dropped).
    let host: String?
    let path: String
    let query: String?

    init?(_ target: String) {
        var rest = Substring(target)
        var host: String?
        let head = target.utf8.prefix(8)
        let isHTTPS = head.count == 8 && String(decoding: head, as: UTF8.self).lowercased() == "https://"
        let isHTTP = !isHTTPS && head.count >= 7 && String(decoding: head.prefix(7), as: UTF8.self).lowercased() == "http://"
        if isHTTP || isHTTPS {
            let scheme = isHTTPS ? "https://" : "http://"
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
