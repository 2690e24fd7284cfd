import Foundation
import TestSupport
import Testing

/// The cache policies, stale answers, collapsed misses, purge and reload, through the daemon.
@Suite(.timeLimit(.minutes(3)))
struct CachePolicyTests {
    typealias T = CacheTests

    @Test func onlyCacheServesWithTheUpstreamStoppedAndSaysCacheMissOtherwise() throws {
        let routes = T.cacheRoute("live", prefix: "/live/") + T.cacheRoute("offline", prefix: "/offline/", cache: "{ policy: only_cache }")
            + T.cacheRoute("prefer", prefix: "/prefer/", cache: "{ policy: prefer_cache }")
            + T.cacheRoute("reload", prefix: "/reload/", cache: "{ policy: reload }")
        let proxy = try ProxyHarness(routes: routes)
        defer { proxy.finish() }
        // reload always asks, and still stores what the others then serve.
        let first = try proxy.get("/reload/cached/shared?cc=max-age=1")
        #expect(first.header("Cache-Status") == "serializerd; fwd=bypass; fwd-status=200; stored")
        let stored = try proxy.get("/reload/cached/shared?cc=max-age=1")
        #expect(stored.header("Cache-Status") == "serializerd; fwd=bypass; fwd-status=200; stored" && stored.body != first.body)
        #expect(try T.requests(proxy, "shared") == 2)
        // prefer_cache serves the entry whatever its age.
        let stale = T.poll(proxy, "/prefer/cached/shared?cc=max-age=1") { ($0.header("Age").flatMap(Int.init) ?? 0) >= 2 }
        #expect(stale?.header("Cache-Status") == "serializerd; hit")
        #expect(try T.requests(proxy, "shared") == 2)
        // prefer_cache still loads what is not stored.
        #expect(try proxy.get("/prefer/cached/other").header("Cache-Status") == "serializerd; fwd=uri-miss; fwd-status=200; stored")
        proxy.stub.stop()
        let offline = try proxy.get("/offline/cached/shared?cc=max-age=1")
        #expect(offline.status == 200 && offline.body == stored.body && offline.header("Cache-Status") == "serializerd; hit")
        let missing = try proxy.get("/offline/cached/nothing")
        #expect(missing.status == 504 && proxy.json(missing)?["type"] as? String == "urn:serializerd:cache-miss")
        #expect((proxy.json(missing)?["detail"] as? String)?.contains("only_cache") == true)
    }

    @Test func staleIfInvalidServesTheLastGoodAnswerUntilItsWindowEnds() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute(cache: "{ stale_if_invalid: 2s }"))
        defer { proxy.finish() }
        let target = "/api/cached/inv?cc=max-age=1"
        let good = try proxy.get(target)
        #expect(good.status == 200)
        // The upstream starts sending HTML with a new validator.
        try T.setMode(proxy, "inv", "mode=html&v=2")
        let covered = T.poll(proxy, target) { $0.header("Cache-Status")?.contains("detail=invalid") == true }
        #expect(covered?.status == 200 && covered?.body == good.body)
        #expect(covered?.header("Cache-Status") == "serializerd; hit; fwd=stale; fwd-status=200; detail=invalid")
        #expect(try T.metric(proxy, "serializerd_cache_requests_total{route=\"api\",result=\"stale\"}") ?? 0 >= 1)
        // The failure's evidence is kept as for any refused answer.
        let failures = proxy.json(try proxy.get("/-/failures"))?["failures"] as? [[String: Any]] ?? []
        #expect(failures.contains { ($0["content_type"] as? String)?.hasPrefix("text/html") == true })
        // Past the window: the failure itself.
        let refused = T.poll(proxy, target, timeout: 15) { $0.status == 502 }
        #expect(proxy.json(try #require(refused))?["type"] as? String == "urn:serializerd:unacceptable-content-type")
        #expect(refused?.header("Cache-Status") == "serializerd; fwd=stale; fwd-status=200")
    }

    @Test func staleIfErrorCoversA5xxAndAnUnreachableUpstream() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute(cache: "{ stale_if_error: 1m }"))
        defer { proxy.finish() }
        let target = "/api/cached/err?cc=max-age=1"
        let good = try proxy.get(target)
        try T.setMode(proxy, "err", "mode=503")
        let covered = T.poll(proxy, target) { $0.header("Cache-Status")?.contains("detail=error") == true }
        #expect(covered?.status == 200 && covered?.body == good.body)
        #expect(covered?.header("Cache-Status") == "serializerd; hit; fwd=stale; fwd-status=503; detail=error")
        proxy.stub.stop()
        let unreachable = try proxy.get(target)
        #expect(unreachable.status == 200 && unreachable.header("Cache-Status") == "serializerd; hit; fwd=stale; detail=error")
        // Nothing stored for it: the failure as usual.
        #expect(try proxy.get("/api/cached/none").status == 502)
    }

    /// One request for `target`, then, once its miss is in flight, `followers` more.
    static func behindOneMiss(_ proxy: ProxyHarness, _ target: String, followers: Int) -> [ProxyHarness.BackgroundRequest] {
        let first = proxy.inBackground(target)
        #expect(T.poll(proxy, "/-/cache") { (proxy.json($0)?["misses_in_flight"] as? Int ?? 0) >= 1 } != nil)
        return [first] + (0..<followers).map { _ in proxy.inBackground(target) }
    }

    @Test func concurrentMissesMakeOneUpstreamRequest() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute())
        defer { proxy.finish() }
        let target = "/api/cached/col?delay=0.5"
        let replies = Self.behindOneMiss(proxy, target, followers: 8).compactMap { $0.reply(timeout: 20) }
        #expect(replies.count == 9)
        #expect(Set(replies.map(\.body)).count == 1)
        #expect(try T.requests(proxy, "col") == 1)
        let collapsed = replies.filter { $0.header("Cache-Status") == "serializerd; hit; collapsed" }.count
        let hits = replies.filter { $0.header("Cache-Status") == "serializerd; hit" }.count
        #expect(collapsed >= 1 && collapsed + hits == 8)
        #expect(try T.metric(proxy, "serializerd_cache_requests_total{route=\"api\",result=\"collapsed\"}") == Double(collapsed))
    }

    @Test func aPurgeDuringACollapsedMissLosesNoRequest() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute())
        defer { proxy.finish() }
        let target = "/api/cached/pc?delay=0.5"
        let requests = Self.behindOneMiss(proxy, target, followers: 4)
        #expect(try proxy.get("/-/cache", method: "DELETE").status == 200)
        let replies = requests.compactMap { $0.reply(timeout: 20) }
        #expect(replies.count == 5 && replies.allSatisfy { $0.status == 200 })
        #expect(Set(replies.map(\.body)).count == 1)
        #expect(try T.requests(proxy, "pc") == 1)
    }

    @Test func aReloadDuringARevalidationStoresNothingForAChangedRoute() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute())
        defer { proxy.finish() }
        let target = "/api/cached/rr?cc=max-age=1&delay=2"
        #expect(try proxy.get(target).status == 200)
        // Stale once a second has passed (only-if-cached asks without revalidating).
        #expect(T.poll(proxy, target, headers: [("Cache-Control", "only-if-cached")]) { $0.status == 504 } != nil)
        let pending = proxy.inBackground(target)
        #expect(T.poll(proxy, "/-/cache") { (proxy.json($0)?["misses_in_flight"] as? Int ?? 0) >= 1 } != nil)
        let stub = "http://127.0.0.1:\(proxy.stubPort)/v1"
        try ("listen: 127.0.0.1:0\nworkers: 2\nroutes:\n" + T.cacheRoute(cache: "{ stale_if_error: 1m }")
            .replacingOccurrences(of: "{stub}", with: stub)).write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        let answered = pending.reply(timeout: 20)
        #expect(answered?.status == 200 && answered?.header("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
        // What the old settings made was not kept: the next request finds nothing.
        #expect(T.poll(proxy, "/-/cache") { proxy.json($0)?["misses_in_flight"] as? Int == 0 } != nil)
        #expect(proxy.json(try proxy.get("/-/cache"))?["entries"] as? Int == 0)
    }

    @Test func purgeIsAdminOnlyAndByRoute() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute() + T.cacheRoute("two", prefix: "/two/"))
        defer { proxy.finish() }
        _ = try proxy.get("/api/cached/p1")
        _ = try proxy.get("/two/cached/p2")
        let listed = try #require(proxy.json(try proxy.get("/-/cache")))
        #expect(listed["entries"] as? Int == 2)
        let routes = listed["routes"] as? [[String: Any]] ?? []
        #expect(routes.map { $0["route"] as? String } == ["api", "two"])
        #expect(routes.first?["policy"] as? String == "protocol" && routes.first?["misses"] as? Int == 1)
        #expect(routes.first?["hits"] as? Int == 0 && (routes.first?["results"] as? [String: Int])?["miss"] == 1)
        // Not from a page that re-points its name at 127.0.0.1, and not by POST.
        #expect(try proxy.get("/-/cache", method: "DELETE", host: "evil.example").status == 403)
        let post = try proxy.get("/-/cache", method: "POST")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD, DELETE")
        #expect(try proxy.get("/-/cache/nosuch", method: "DELETE").status == 404)
        let purged = try proxy.get("/-/cache/api", method: "DELETE")
        #expect(purged.status == 200 && proxy.json(purged)?["purged"] as? Int == 1)
        #expect(try proxy.get("/api/cached/p1").header("Cache-Status")?.contains("uri-miss") == true)
        #expect(try proxy.get("/two/cached/p2").header("Cache-Status") == "serializerd; hit")
        #expect(proxy.json(try proxy.get("/-/cache", method: "DELETE"))?["purged"] as? Int == 2)
        #expect(try T.metric(proxy, "serializerd_cache_entries") == 0)
    }

    @Test func aReloadKeepsWhatUnchangedRoutesStored() throws {
        let routes = T.cacheRoute() + T.cacheRoute("two", prefix: "/two/")
        let proxy = try ProxyHarness(routes: routes)
        defer { proxy.finish() }
        _ = try proxy.get("/api/cached/r1")
        _ = try proxy.get("/two/cached/r2")
        let stub = "http://127.0.0.1:\(proxy.stubPort)/v1"
        let changed = T.cacheRoute() + T.cacheRoute("two", prefix: "/two/", cache: "{ stale_if_error: 5m }")
        try ("listen: 127.0.0.1:0\nworkers: 2\nroutes:\n" + changed.replacingOccurrences(of: "{stub}", with: stub))
            .write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        #expect(try proxy.get("/api/cached/r1").header("Cache-Status") == "serializerd; hit")
        #expect(try proxy.get("/two/cached/r2").header("Cache-Status")?.contains("uri-miss") == true)
    }

    @Test func aFloodOfURLsStaysWithinMaxBytes() throws {
        let proxy = try ProxyHarness(routes: T.cacheRoute(), top: "cache: { max_bytes: 64KiB }\n")
        defer { proxy.finish() }
        for index in 0..<400 { #expect(try proxy.get("/api/cached/flood\(index)").status == 200) }
        let metrics = Metrics(try proxy.get("/metrics").text)
        let bytes = try #require(metrics["serializerd_cache_bytes"])
        #expect(bytes > 0 && bytes <= 64 * 1024)
        #expect((metrics["serializerd_cache_entries"] ?? 0) < 400)
        // The most recent are kept.
        #expect(try proxy.get("/api/cached/flood399").header("Cache-Status") == "serializerd; hit")
    }
}
