import EventLoop

/// One admin request as its handler reads it: the exchange, its target, the writer, and
/// the path segment the route's `*` matched (a route name, a request id).
struct AdminRequest {
    let exchange: any ClientExchange
    let target: RequestTarget
    let writer: ResponseWriter
    let parameter: String

    var method: String { exchange.method }
}

/// serializerd's own endpoints, `/metrics` and everything under `/-/`, as one table of
/// (methods, path pattern) → handler. A pattern is a path whose segments are literal or
/// `*` (one non-empty segment, handed to the handler). A path that matches no pattern is
/// not found; one matched under another method is refused with the table's methods.
struct AdminRouter<Handler: Sendable>: Sendable {
    struct Entry {
        let methods: [String]
        let segments: [Substring]
        let handler: Handler
    }

    enum Match {
        case handler(Handler, parameter: String)
        case methodNotAllowed(allow: [String])
        case notFound
    }

    let entries: [Entry]

    /// `routes`: methods, pattern, handler; a pattern is tried in the order given.
    init(_ routes: [([String], String, Handler)]) {
        entries = routes.map { Entry(methods: $0.0, segments: $0.1.split(separator: "/", omittingEmptySubsequences: false), handler: $0.2) }
    }

    /// Whether `path` is the admin's to answer (checked before routing).
    static func isAdmin(path: String) -> Bool { path == "/metrics" || path.hasPrefix("/-/") }

    func match(method: String, path: String) -> Match {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var allow: [String] = []
        for entry in entries where entry.segments.count == segments.count {
            var parameter = ""
            var matched = true
            for (pattern, segment) in zip(entry.segments, segments) {
                if pattern == "*" {
                    if segment.isEmpty { matched = false; break }
                    parameter = String(segment)
                } else if pattern != segment {
                    matched = false
                    break
                }
            }
            guard matched else { continue }
            if entry.methods.contains(method) { return .handler(entry.handler, parameter: parameter) }
            for allowed in entry.methods where !allow.contains(allowed) { allow.append(allowed) }
        }
        return allow.isEmpty ? .notFound : .methodNotAllowed(allow: allow)
    }
}
