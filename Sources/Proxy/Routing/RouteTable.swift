import HTTPCore

/// Chooses the route for a request (DESIGN §4): among routes whose prefix matches and
/// whose methods allow the method, the longest prefix wins; a prefix match with no
/// allowed method is a 405. Host routes serve only absolute-form requests for their
/// host; origin-form requests only reach routes without a host.
public struct RouteTable: Sendable {
    public let routes: [Route]

    public init(_ routes: [Route]) {
        // Longest prefix first, so the first hit is the winner.
        self.routes = routes.enumerated().sorted {
            $0.element.prefix.count != $1.element.prefix.count
                ? $0.element.prefix.count > $1.element.prefix.count : $0.offset < $1.offset
        }.map(\.element)
    }

    public enum Match: Sendable {
        case route(Route)
        case methodNotAllowed(allow: [String])
        case noRoute
    }

    /// `host` is the absolute-form request's lowercased authority, nil for origin-form.
    public func match(method: String, path: String, host: String?) -> Match {
        var allow: Set<String> = []
        var prefixMatched = false
        for route in routes where route.host == host && path.hasPrefix(route.prefix) {
            if route.allows(method) { return .route(route) }
            prefixMatched = true
            allow.formUnion(route.methods ?? Set(HTTPMethod.forwardedByDefault))
        }
        return prefixMatched ? .methodNotAllowed(allow: allow.sorted()) : .noRoute
    }
}
