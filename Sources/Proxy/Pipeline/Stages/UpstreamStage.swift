import HTTPCore
import Upstream

/// The upstream exchange (DESIGN §4): the request fields (with the stored entry's
/// validators when the cache revalidates), failed at once while the health probe says
/// the upstream is down, else sent; the answer goes to `RequestPipeline.complete`.
struct UpstreamStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        let plain = pipeline.upstreamFields(context, route: route)
        var fields = plain
        let revalidating = context.cached?.revalidating == true
        if revalidating, let stale = context.cached?.stale {
            // RFC 9111 §4.3.1: the upstream's own validators.
            if let etag = stale.upstreamETag { fields.append("If-None-Match", etag) }
            if let modified = stale.lastModified { fields.append("If-Modified-Since", modified) }
        }
        context.upstreamSent?.lines = fields.bytes
        let method = context.request.method
        var upstream = UpstreamRequest(url: context.url, method: method, headers: fields, body: context.serialized.body,
                                       timeout: route.timeout, connectTimeout: route.connectTimeout,
                                       followRedirects: route.followRedirects, maxResponseBytes: pipeline.config.limits.maxResponseBody,
                                       tls: route.tls, httpVersion: route.httpVersion, cookies: route.cookies,
                                       tag: UpstreamRequest.Tag(requestID: context.requestID, route: route.name, method: method,
                                                                path: context.path))
        upstream.uncappedStreams = context.streamsVia != nil && !route.stream.bytes.isEmpty
        // The health probe says the upstream is down: fail now, not after a connect timeout
        // (a stale cache entry may still answer).
        if route.reachability.failsFast {
            pipeline.leaveGate(context)
            let since = route.reachability.since.map { " since " + UTCTimestamp.format(unixSeconds: $0, fraction: .milliseconds) } ?? ""
            pipeline.complete(.failure(.unavailable(code: RequestPipeline.couldNotConnect,
                                                    message: "the upstream is unreachable by its health probe\(since); failing at once")),
                              context)
            return .answered
        }
        var unconditional: UpstreamRequest?
        if revalidating {
            unconditional = upstream
            unconditional?.headers = plain
        }
        pipeline.send(upstream, unconditional: unconditional, context)
        return .answered
    }
}
