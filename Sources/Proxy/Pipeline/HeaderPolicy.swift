import HTTPCore

/// Which headers cross the proxy, in each direction (DESIGN §3, §4).
enum HeaderPolicy {
    /// Hop-by-hop (RFC 9110 §7.6.1) and what libcurl or the writer sets itself.
    static let notForwardedUpstream: Set<String> = [
        "host", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authorization",
        "proxy-authenticate", "proxy-connection", "content-length", "content-type", "accept-encoding", "expect",
        "x-request-id", "x-forwarded-for",
    ]

    /// The upstream headers a normalized response carries to the client.
    static let forwardedDownstream = HeaderNames(["cache-control", "expires", "last-modified", "date", "vary", "link", "retry-after"])

    /// Never forwarded, even for `on_failure: passthrough`: the body is re-framed and decoded.
    static let hopByHopDownstream = HeaderNames([
        "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-connection", "content-length", "content-encoding",
    ])

    /// Client headers → upstream headers: end-to-end ones, then the route's (which win),
    /// then X-Forwarded-For and X-Request-Id.
    static func upstreamHeaders(client: [(String, String)], route: [(String, String)], contentType: String?,
                                peer: String, requestID: String) -> [(String, String)] {
        let overridden = route.isEmpty ? [] : Set(route.map { $0.0.lowercased() })
        var result: [(String, String)] = []
        result.reserveCapacity(client.count + route.count + 3)
        var prior: [String] = []
        for (field, value) in client {
            let name = field.lowercased()
            if name == "x-forwarded-for" { prior.append(value) }
            if !notForwardedUpstream.contains(name) && !name.hasPrefix("proxy-") && !overridden.contains(name) {
                result.append((field, value))
            }
        }
        result += route
        if let contentType { result.append(("Content-Type", contentType)) }
        result.append(("X-Forwarded-For", (prior + [peer]).joined(separator: ", ")))
        result.append(("X-Request-Id", requestID))
        return result
    }
}
