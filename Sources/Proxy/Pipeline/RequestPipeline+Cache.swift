import Cache
import EventLoop
import HTTPCore
import Serializers
import Tracing
import Upstream

extension RequestPipeline {
    enum CacheStep {
        /// The cache answered.
        case answered
        /// The request waits behind a miss in flight on its key.
        case parked
        case forward(CacheExchange)
    }

    /// Mocks and the tape had no answer: the cache may (DESIGN §1). A woken request
    /// waited for another's miss and comes back to read what it stored.
    func consultCache(_ rule: CacheRule, _ context: RequestContext, route: Route) -> CacheStep {
        let request = context.request, url = context.url, woken = context.woken
        let method = request.method
        let key = CacheKey(method: "GET", url: url, scope: route.cacheScope)
        let selecting = { (name: String) -> String? in route.headers.first(name) ?? request.fields.first(name) }
        let now = clock.now()
        let consults = HTTPMethod.isCacheable(method)
        let found = consults ? cache.store.find(key, request: selecting) : (response: nil, keyKnown: false)
        let asked = Self.requestControl(request)
        // Made only for a request that goes upstream: a hit never needs it.
        var exchange: CacheExchange
        switch CacheChoice.of(policy: rule.policy, method: method, request: asked.control, stored: found.response,
                              keyKnown: found.keyKnown, now: now, unkeyed: asked.unkeyed) {
        case .hit(let entry):
            serveStored(entry, context, result: woken ? .collapsed : .hit,
                        status: woken ? "serializerd; hit; collapsed" : "serializerd; hit", now: now)
            return .answered
        case .unsatisfiable(let fwd):
            context.cache = .init(result: .miss, status: "serializerd; fwd=" + fwd)
            let why = rule.policy == .onlyCache ? "the route's cache.policy is only_cache" : "the request says Cache-Control: only-if-cached"
            let what: String
            switch fwd {
            case "method": what = "a \(method) request is never answered from the cache"
            case "request": what = "the request says Cache-Control: no-store"
            case "bypass": what = "the request carries a forwarding header the cache is not keyed by (X-Forwarded-Host and the like)"
            default: what = "nothing usable is stored for \(config.capture.url(url))"
            }
            context.reply.problem(.cacheMiss("\(what), and \(why)"), route: route.name)
            return .answered
        case .revalidate(let entry):
            exchange = CacheExchange(rule: rule, key: key, requestedAt: now, selecting: selecting, fingerprint: route.fingerprint)
            exchange.fwd = "stale"
            exchange.stale = entry
            exchange.revalidating = true
            exchange.store = true
        case .forward(let fwd, let result, let stale, let store):
            exchange = CacheExchange(rule: rule, key: key, requestedAt: now, selecting: selecting, fingerprint: route.fingerprint)
            exchange.fwd = fwd
            exchange.result = result
            exchange.stale = stale
            exchange.store = store
        }
        // Misses of one key make one upstream request: the first leads, the rest wait for
        // what it stores. HEAD stores nothing, so it neither leads nor waits.
        if method == "GET" && exchange.store {
            if woken {
                exchange.leads = cache.misses.lead(key)
            } else {
                let mailbox = self.mailbox
                guard cache.misses.join(key, wake: { mailbox.post(.cacheFilled(key)) }) else {
                    park(key) { [unowned self, context] in
                        if self.shuttingDown { return context.reply.problem(.unavailable, route: route.name) }
                        self.resume(context)
                    }
                    return .parked
                }
                exchange.leads = true
            }
        }
        return .forward(exchange)
    }

    /// The client's Cache-Control, or `Pragma: no-cache` without one (RFC 9111 §5.4), and
    /// whether it sent a forwarding field the cache is not keyed by (then it neither reads
    /// nor feeds the cache): one pass over its fields.
    static func requestControl(_ request: any ClientExchange) -> (control: CacheControl, unkeyed: Bool) {
        var lines: [String] = []
        var pragmaNoCache = false, unkeyed = false
        request.fields.forEach { name, value in
            if HeaderPolicy.unkeyedForwarding.contains(name) {
                unkeyed = true
            } else if HeaderPolicy.cacheControl.contains(name) {
                lines.append(String(decoding: value, as: UTF8.self))
            } else if HeaderPolicy.pragma.contains(name), String(decoding: value, as: UTF8.self).lowercased().contains("no-cache") {
                pragmaNoCache = true
            }
        }
        var control = CacheControl(lines)
        if lines.isEmpty && pragmaNoCache { control.noCache = true }
        return (control, unkeyed)
    }

    /// Waits (counted in flight, so shutdown waits too) for the miss in flight on `key`.
    func park(_ key: CacheKey, _ resume: @escaping () -> Void) {
        requestStarted()
        parked[key, default: []].append(resume)
    }

    /// The miss on `key` is answered: the requests waiting for it read the cache again.
    func wakeParked(_ key: CacheKey) {
        guard let waiting = parked.removeValue(forKey: key) else { return }
        for resume in waiting {
            inFlightEnded()
            resume()
        }
        upstreamEnded()
    }

    /// An answer from the cache: the stored output, its fields, `Age` and the tag.
    func serveStored(_ entry: StoredResponse, _ context: RequestContext, result: CacheResult, status: String, now: Double,
                     reply: UpstreamResponse? = nil, error: String? = nil) {
        context.source = .cache
        context.cache = .init(result: result, status: status)
        var headers = ResponseWriter.successHeaders(serializer: entry.serializer)
        headers.append(contentsOf: entry.fields)
        headers.append("Age", String(Int(entry.freshness.age(at: now))))
        context.reply.sendNormalized(status: entry.status, headers: headers, body: entry.body, tag: entry.tag,
                              outcome: .init(label: "ok", serializer: entry.serializer, reply: reply, error: error))
    }

    /// A stored entry in place of a failed upstream or a refused answer, when the route's
    /// window (or the response's `stale-if-error`) allows it.
    func serveStale(_ cached: CacheExchange, invalid: Bool, fwdStatus: Int?, _ context: RequestContext,
                    reply: UpstreamResponse? = nil, error: String? = nil) -> Bool {
        guard let stale = cached.stale else { return false }
        let now = clock.now()
        let window = invalid ? cached.rule.staleIfInvalid : cached.rule.staleIfError
        guard stale.mayServeStale(window: window, responseDirective: !invalid, at: now) else { return false }
        var status = "serializerd; hit; fwd=stale"
        if let fwdStatus { status += "; fwd-status=\(fwdStatus)" }
        status += invalid ? "; detail=invalid" : "; detail=error"
        context.sampledTrace?.event("stale", at: now, [SpanAttribute("serializerd.stale.reason", invalid ? "invalid" : "error")]
                             + (fwdStatus.map { [SpanAttribute("http.response.status_code", $0)] } ?? []))
        serveStored(stale, context, result: .stale, status: status, now: now, reply: reply, error: error)
        return true
    }

    /// An upstream 304 to a revalidation: the entry is fresh again, its output reused
    /// without running the serializer (RFC 9111 §4.3.4).
    func refresh(_ cached: CacheExchange, stale: StoredResponse, reply: UpstreamResponse, _ context: RequestContext) {
        var updates = HeaderFields()
        reply.headers.appending(where: HeaderPolicy.forwardedDownstream.contains, to: &updates)
        let headers = stale.merging(updates)
        let now = clock.now()
        let freshness = Freshness(status: stale.status, fields: headers, requestedAt: cached.requestedAt, receivedAt: now,
                                  wallNow: clock.wall())
        let etag = reply.headers.first("ETag")
        let refreshed = stale.refreshed(fields: headers, upstreamETag: etag, freshness: freshness)
        cache.store(cached.key, refreshed, fingerprint: cached.fingerprint)
        serveStored(refreshed, context, result: .revalidated, status: cached.status(fwdStatus: 304), now: now, reply: reply)
    }

    /// A fresh normalized answer on a caching route: stored when the rules allow, sent
    /// with serializerd's tag.
    func sendCaching(_ bytes: [UInt8], serializer: String, reply: UpstreamResponse, cached: CacheExchange, route: Route,
                     _ context: RequestContext) {
        var forwardedFields = HeaderFields()
        reply.headers.appendEndToEnd(where: HeaderPolicy.forwardedDownstream.contains, to: &forwardedFields)
        var tag: String?
        var stored = false
        let isGet = context.request.method == "GET"
        if cached.store, isGet, reply.status != 206 {
            if case .storable(let vary) = Storability.of(method: "GET", status: reply.status, requestFields: cached.requestFields,
                                                          responseFields: reply.headers) {
                let freshness = Freshness(status: reply.status, fields: reply.headers, requestedAt: cached.requestedAt, receivedAt: clock.now(),
                                          wallNow: clock.wall())
                let entry = StoredResponse(status: reply.status, fields: forwardedFields, body: bytes, serializer: serializer,
                                           freshness: freshness, vary: vary, request: cached.selecting, route: route.name,
                                           upstreamETag: reply.headers.first("ETag"))
                stored = cache.store(cached.key, entry, fingerprint: route.fingerprint)
                tag = entry.tag
            }
        }
        context.cache = .init(result: cached.result, status: cached.status(fwdStatus: reply.status, stored: stored))
        var headers = ResponseWriter.successHeaders(serializer: serializer)
        headers.append(contentsOf: forwardedFields)
        // Set-Cookie reaches this client only: never stored (a response with it is not storable).
        if context.passesCookies { reply.headers.appending(where: HeaderPolicy.setCookie.contains, to: &headers) }
        // HEAD's answer has no output to tag: its tag is GET's, which it does not know.
        if isGet && tag == nil { tag = OutputTag.of(bytes) }
        context.reply.sendNormalized(status: reply.status, headers: headers, body: bytes, tag: tag,
                              outcome: .init(label: "ok", serializer: serializer, reply: reply))
    }
}
