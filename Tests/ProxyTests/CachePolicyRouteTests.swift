import Foundation
@testable import Proxy
import Testing

/// The cache policies, stale answers, collapsed misses, purge and reload, in process:
/// an upstream answer can be held in flight while other requests arrive.
@Suite struct CachePolicyRouteTests {
    @Test func onlyCacheServesWithTheUpstreamDownAndSaysCacheMissOtherwise() throws {
        let routes = cacheRoute("live", prefix: "/live/") + cacheRoute("offline", prefix: "/offline/", cache: "{ policy: only_cache }")
            + cacheRoute("prefer", prefix: "/prefer/", cache: "{ policy: prefer_cache }")
            + cacheRoute("reload", prefix: "/reload/", cache: "{ policy: reload }")
        let proxy = try InProcessProxy(routes: routes)
        // reload always asks, and still stores what the others then serve.
        let first = proxy.get("/reload/cached/shared?cc=max-age=1")
        #expect(first.replyHeader("Cache-Status") == "serializerd; fwd=bypass; fwd-status=200; stored")
        let stored = proxy.get("/reload/cached/shared?cc=max-age=1")
        #expect(stored.replyHeader("Cache-Status") == "serializerd; fwd=bypass; fwd-status=200; stored" && stored.replyBody != first.replyBody)
        #expect(proxy.requests("shared") == 2)
        // prefer_cache serves the entry whatever its age.
        proxy.clock.advance(3)
        let stale = proxy.get("/prefer/cached/shared?cc=max-age=1")
        #expect(stale.replyHeader("Cache-Status") == "serializerd; hit" && stale.replyHeader("Age") == "3")
        #expect(proxy.requests("shared") == 2)
        // prefer_cache still loads what is not stored.
        #expect(proxy.get("/prefer/cached/other").replyHeader("Cache-Status") == "serializerd; fwd=uri-miss; fwd-status=200; stored")
        proxy.upstream.down = true
        let offline = proxy.get("/offline/cached/shared?cc=max-age=1")
        #expect(offline.status == 200 && offline.replyBody == stored.replyBody && offline.replyHeader("Cache-Status") == "serializerd; hit")
        let missing = proxy.get("/offline/cached/nothing")
        #expect(missing.status == 504 && missing.replyJSON?["type"] as? String == "urn:serializerd:cache-miss")
        #expect((missing.replyJSON?["detail"] as? String)?.contains("only_cache") == true)
    }

    @Test func staleIfInvalidServesTheLastGoodAnswerUntilItsWindowEnds() throws {
        let proxy = try InProcessProxy(routes: cacheRoute(cache: "{ stale_if_invalid: 2s }"))
        let target = "/api/cached/inv?cc=max-age=1"
        let good = proxy.get(target)
        #expect(good.status == 200)
        // The upstream starts sending HTML with a new validator.
        proxy.upstream.resources["inv"]?.mode = "html"
        proxy.upstream.resources["inv"]?.version = 2
        proxy.clock.advance(2)
        let covered = proxy.get(target)
        #expect(covered.status == 200 && covered.replyBody == good.replyBody)
        #expect(covered.replyHeader("Cache-Status") == "serializerd; hit; fwd=stale; fwd-status=200; detail=invalid")
        #expect(proxy.metric("serializerd_cache_requests_total{route=\"api\",result=\"stale\"}") == 1)
        // The failure's evidence is kept as for any refused answer.
        let failures = proxy.get("/-/failures").replyJSON?["failures"] as? [[String: Any]] ?? []
        #expect(failures.contains { ($0["content_type"] as? String)?.hasPrefix("text/html") == true })
        // Past the window (1 s fresh, 2 s more): the failure itself.
        proxy.clock.advance(1.5)
        let refused = proxy.get(target)
        #expect(refused.status == 502 && refused.replyJSON?["type"] as? String == "urn:serializerd:unacceptable-content-type")
        #expect(refused.replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=200")
    }

    @Test func staleIfErrorCoversA5xxAndAnUnreachableUpstream() throws {
        let proxy = try InProcessProxy(routes: cacheRoute(cache: "{ stale_if_error: 1m }"))
        let target = "/api/cached/err?cc=max-age=1"
        let good = proxy.get(target)
        proxy.upstream.resources["err"]?.mode = "503"
        proxy.clock.advance(2)
        let covered = proxy.get(target)
        #expect(covered.status == 200 && covered.replyBody == good.replyBody)
        #expect(covered.replyHeader("Cache-Status") == "serializerd; hit; fwd=stale; fwd-status=503; detail=error")
        proxy.upstream.down = true
        let unreachable = proxy.get(target)
        #expect(unreachable.status == 200 && unreachable.replyHeader("Cache-Status") == "serializerd; hit; fwd=stale; detail=error")
        // Nothing stored for it: the failure as usual.
        #expect(proxy.get("/api/cached/none").status == 502)
        // Past the window: the failure.
        proxy.clock.advance(61)
        #expect(proxy.get(target).status == 502)
    }

    /// One request for `target` whose upstream answer is held, then `followers` more.
    static func behindOneMiss(_ proxy: InProcessProxy, _ target: String, followers: Int) -> [RecordedExchange] {
        let first = proxy.get(target, hold: true)
        #expect(proxy.get("/-/cache", hold: true).replyJSON?["misses_in_flight"] as? Int == 1)
        return [first] + (0..<followers).map { _ in proxy.get(target, hold: true) }
    }

    @Test func concurrentMissesMakeOneUpstreamRequest() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let exchanges = Self.behindOneMiss(proxy, "/api/cached/col", followers: 8)
        #expect(exchanges.allSatisfy { $0.replies.isEmpty })
        proxy.settle()
        #expect(exchanges.allSatisfy { $0.replies.count == 1 && $0.status == 200 })
        #expect(Set(exchanges.map(\.replyBody)).count == 1)
        #expect(proxy.requests("col") == 1)
        #expect(exchanges.dropFirst().allSatisfy { $0.replyHeader("Cache-Status") == "serializerd; hit; collapsed" })
        #expect(proxy.metric("serializerd_cache_requests_total{route=\"api\",result=\"collapsed\"}") == 8)
    }

    @Test func aPurgeDuringACollapsedMissLosesNoRequest() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let exchanges = Self.behindOneMiss(proxy, "/api/cached/pc", followers: 4)
        #expect(proxy.get("/-/cache", method: "DELETE").status == 200)
        proxy.settle()
        #expect(exchanges.allSatisfy { $0.replies.count == 1 && $0.status == 200 })
        #expect(Set(exchanges.map(\.replyBody)).count == 1)
        #expect(proxy.requests("pc") == 1)
    }

    @Test func aShutdownAnswersParkedRequests() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let exchanges = Self.behindOneMiss(proxy, "/api/cached/sd", followers: 2)
        proxy.worker.pipeline.shuttingDown = true
        proxy.upstream.abortAll()
        proxy.settle()
        #expect(exchanges.allSatisfy { $0.replies.count == 1 && $0.status == 503 })
        #expect(proxy.worker.pipeline.inFlight == 0)
    }

    @Test func aReloadDuringARevalidationStoresNothingForAChangedRoute() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let target = "/api/cached/rr?cc=max-age=1"
        #expect(proxy.get(target).status == 200)
        proxy.clock.advance(2)
        let pending = proxy.get(target, hold: true)
        #expect(proxy.get("/-/cache", hold: true).replyJSON?["misses_in_flight"] as? Int == 1)
        try proxy.reload(routes: cacheRoute() + "    output: { envelope: true }\n")
        proxy.settle()
        #expect(pending.status == 200 && pending.replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
        // What the old settings made was not kept: the next request finds nothing.
        let cache = proxy.get("/-/cache").replyJSON
        #expect(cache?["misses_in_flight"] as? Int == 0 && cache?["entries"] as? Int == 0)
    }

    @Test func purgeIsAdminOnlyAndByRoute() throws {
        let proxy = try InProcessProxy(routes: cacheRoute() + cacheRoute("two", prefix: "/two/"))
        proxy.get("/api/cached/p1")
        proxy.get("/two/cached/p2")
        let listed = try #require(proxy.get("/-/cache").replyJSON)
        #expect(listed["entries"] as? Int == 2)
        let routes = listed["routes"] as? [[String: Any]] ?? []
        #expect(routes.map { $0["route"] as? String } == ["api", "two"])
        #expect(routes.first?["policy"] as? String == "protocol" && routes.first?["misses"] as? Int == 1)
        #expect(routes.first?["hits"] as? Int == 0 && (routes.first?["results"] as? [String: Int])?["miss"] == 1)
        // Not from a page that re-points its name at 127.0.0.1, and not by POST.
        #expect(proxy.get("/-/cache", method: "DELETE", host: "evil.example").status == 403)
        let post = proxy.get("/-/cache", method: "POST")
        #expect(post.status == 405 && post.replyHeader("Allow") == "GET, HEAD, DELETE")
        #expect(proxy.get("/-/cache/nosuch", method: "DELETE").status == 404)
        let purged = proxy.get("/-/cache/api", method: "DELETE")
        #expect(purged.status == 200 && purged.replyJSON?["purged"] as? Int == 1)
        #expect(proxy.get("/api/cached/p1").replyHeader("Cache-Status")?.contains("uri-miss") == true)
        #expect(proxy.get("/two/cached/p2").replyHeader("Cache-Status") == "serializerd; hit")
        #expect(proxy.get("/-/cache", method: "DELETE").replyJSON?["purged"] as? Int == 2)
        #expect(proxy.metric("serializerd_cache_entries") == 0)
    }

    @Test func aReloadKeepsWhatUnchangedRoutesStored() throws {
        let proxy = try InProcessProxy(routes: cacheRoute() + cacheRoute("two", prefix: "/two/"))
        proxy.get("/api/cached/r1")
        proxy.get("/two/cached/r2")
        // The fingerprint leaves out the cache policy, timeouts and matching: a route that
        // changed only those keeps its entries; one that sends other headers does not.
        try proxy.reload(routes: cacheRoute(cache: "{ stale_if_error: 5m }") + "    timeout: 7s\n"
            + cacheRoute("two", prefix: "/two/") + "    headers: { X-User: bob }\n")
        #expect(proxy.get("/api/cached/r1").replyHeader("Cache-Status") == "serializerd; hit")
        #expect(proxy.get("/two/cached/r2").replyHeader("Cache-Status")?.contains("uri-miss") == true)
    }

    @Test func aFloodOfURLsStaysWithinMaxBytes() throws {
        let proxy = try InProcessProxy(routes: cacheRoute(), top: "cache: { max_bytes: 64KiB }\n")
        for index in 0..<400 { #expect(proxy.get("/api/cached/flood\(index)").status == 200) }
        let metrics = MetricsText.parse(proxy.get("/metrics").text)
        let bytes = try #require(metrics["serializerd_cache_bytes"])
        #expect(bytes > 0 && bytes <= 64 * 1024)
        #expect((metrics["serializerd_cache_entries"] ?? 0) < 400)
        // The most recent are kept.
        #expect(proxy.get("/api/cached/flood399").replyHeader("Cache-Status") == "serializerd; hit")
    }
}
