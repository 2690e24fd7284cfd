import EventLoop
import HTTPCore
import Upstream

/// Which headers cross the proxy, in each direction (DESIGN §3, §4).
enum HeaderPolicy {
    /// Hop-by-hop (RFC 9110 §7.6.1) and what libcurl or the writer sets itself.
    static let notForwardedUpstream = HeaderNames([
        "host", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authorization",
        "proxy-authenticate", "proxy-connection", "content-length", "content-type", "accept-encoding", "expect",
        "x-request-id", "x-forwarded-for", "via", "serializerd-fault", "serializerd-chaos",
    ])

    static let forwardedFor = HeaderNames(["x-forwarded-for"])
    /// With tracing on, each upstream attempt carries serializerd's own (DESIGN §12).
    static let traceContext = HeaderNames(["traceparent", "tracestate"])
    static let viaName = HeaderNames(["via"])

    /// The upstream headers a normalized response carries to the client.
    static let forwardedDownstream = HeaderNames(["cache-control", "expires", "last-modified", "date", "vary", "link", "retry-after"])

    static let retryAfter = HeaderNames(["retry-after"])
    static let setCookie = HeaderNames(["set-cookie"])
    static let cookie = HeaderNames(["cookie"])
    static let cacheControl = HeaderNames(["cache-control"])
    static let pragma = HeaderNames(["pragma"])
    /// A client's preconditions name serializerd's representation, not the upstream's: a
    /// caching route does not forward them (it sends its own when revalidating).
    static let conditionals = HeaderNames(["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"])
    static let date = HeaderNames(["date"])
    /// Fields some upstreams (and the frameworks in front of them) read to rebuild the
    /// request's URL or method, but that are not in the cache key: a request carrying one
    /// neither reads nor feeds the cache, or an upstream that reflects them would poison
    /// the entry for every client (DESIGN §3).
    static let unkeyedForwarding = HeaderNames([
        "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "x-original-url", "x-rewrite-url",
        "x-http-method-override", "x-method-override",
    ])

    /// Never forwarded, even for `on_failure: passthrough`: the body is re-framed and decoded.
    static let hopByHopDownstream = HeaderNames([
        "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-connection", "content-length", "content-encoding",
    ])

    /// An upstream response's end-to-end fields (passthrough replies, envelopes): not
    /// hop-by-hop, not framing, not named by its Connection header.
    /// `cookies`: false for a route whose jar keeps the upstream's Set-Cookie.
    static func endToEnd(_ headers: HeaderFields, cookies: Bool = true) -> HeaderFields {
        var fields = HeaderFields()
        headers.appendEndToEnd(where: { !hopByHopDownstream.contains($0) && (cookies || !setCookie.contains($0)) }, to: &fields)
        return fields
    }

    /// Client headers → upstream headers: end-to-end ones, then the route's (which win),
    /// then X-Forwarded-For, X-Request-Id and Via (the client's entries, then this
    /// daemon's). Read and written as bytes: most requests carry several headers and none
    /// of them needs to become a String.
    /// `peer` is nil for a Unix-socket client.
    static func upstreamHeaders(client request: any ClientExchange, route: Route, contentType: String?,
                                peer: String?, requestID: String, via: String, tracing: Bool = false) -> HeaderFields {
        var lines = HeaderFields()
        var prior: [UInt8] = []
        var vias: [UInt8] = []
        // Fields the client's Connection header names are hop-by-hop too: taken out after
        // the one pass, in the rare request whose Connection names one.
        var named: HeaderNames?
        let caching = route.cache != nil
        // `cookies: jar`: the route's jar sends its cookies; the client's are not forwarded.
        let jar = route.cookies != nil
        request.fields.forEach { name, value in
            if HeaderNames.isConnection(name) {
                var options = named ?? HeaderNames([])
                options.addConnectionOptions(value)
                named = options
            }
            if forwardedFor.contains(name) {
                if !prior.isEmpty { prior += [UInt8(ascii: ","), UInt8(ascii: " ")] }
                prior += value
            } else if viaName.contains(name) {
                vias += value
                vias += [UInt8(ascii: ","), UInt8(ascii: " ")]
            }
            if !notForwardedUpstream.contains(name) && !HeaderNames.hasPrefix(name, "proxy-") && !route.headerNames.contains(name)
                && !(caching && conditionals.contains(name)) && !(jar && cookie.contains(name))
                && !(tracing && traceContext.contains(name)) {
                lines.append(name: name, value: value)
            }
        }
        if let named, !named.isEmpty {
            let taken = lines
            lines = HeaderFields()
            taken.appending(where: { !named.contains($0) }, to: &lines)
        }
        lines.append(contentsOf: route.headers)
        if let contentType { lines.append("Content-Type", contentType) }
        // A Unix-socket peer has no address to add: the client's own chain (a local
        // front end's) goes on as it came, and none is made up.
        if let peer {
            if !prior.isEmpty { prior += [UInt8(ascii: ","), UInt8(ascii: " ")] }
            prior += peer.utf8
        }
        if !prior.isEmpty { prior.withUnsafeBufferPointer { lines.append("X-Forwarded-For", value: $0) } }
        lines.append("X-Request-Id", requestID)
        vias += via.utf8
        vias.withUnsafeBufferPointer { lines.append("Via", value: $0) }
        return lines
    }

    /// A Via entry of this daemon's among the client's: the request came back (DESIGN §4).
    /// `viaID` is this daemon's entry without its protocol (`serializerd-<id>`), matched whole.
    static func isLoop(_ request: any ClientExchange, viaID: [UInt8]) -> Bool {
        var found = false
        request.fields.forEach { name, value in
            guard !found, viaName.contains(name) else { return }
            for entry in value.split(separator: UInt8(ascii: ",")) {
                let tokens = entry.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 })
                if tokens.count >= 2, tokens[1].elementsEqual(viaID) { found = true }
            }
        }
        return found
    }
}
