import Foundation
import TestSupport
import Testing

/// The response cache (DESIGN §2 `cache:`, §3 *Caching*) through the daemon, against a
/// stub resource that counts its requests (`/v1/cached/KEY`).
@Suite(.timeLimit(.minutes(3)))
struct CacheTests {
    static func cacheRoute(_ name: String = "api", prefix: String = "/api/", cache: String = "{}") -> String {
        "  - name: \(name)\n    match: { prefix: \(prefix) }\n    upstream: {stub}\n    cache: \(cache)\n"
    }

    /// What the stub saw for `key`: requests, 304s sent, conditional headers.
    static func state(_ proxy: ProxyHarness, _ key: String) throws -> [String: Any] {
        let reply = try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachestate/\(key)")
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
    }

    static func requests(_ proxy: ProxyHarness, _ key: String) throws -> Int { try state(proxy, key)["requests"] as? Int ?? -1 }

    static func setMode(_ proxy: ProxyHarness, _ key: String, _ query: String) throws {
        #expect(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachemode/\(key)?\(query)").status == 200)
    }

    static func metric(_ proxy: ProxyHarness, _ series: String) throws -> Double? {
        Metrics(try proxy.get("/metrics").text)[series]
    }

    /// Sends `target` until `done` holds for the reply; nil at the deadline.
    static func poll(_ proxy: ProxyHarness, _ target: String, headers: [(String, String)] = [], timeout: Double = 10,
                     until done: (RawResponse) -> Bool) -> RawResponse? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let reply = try? proxy.get(target, headers: headers), done(reply) { return reply }
            usleep(50_000)
        }
        return nil
    }

    @Test func aFreshHitAsksNobodyAndIsTheMissByteForByte() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        let miss = try proxy.get("/api/cached/fresh")
        #expect(miss.status == 200)
        #expect(miss.header("Cache-Status") == "serializerd; fwd=uri-miss; fwd-status=200; stored")
        #expect(miss.header("Serializerd-Source") == "upstream")
        let tag = try #require(miss.header("ETag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
        let hit = try proxy.get("/api/cached/fresh")
        #expect(hit.status == 200 && hit.body == miss.body)
        #expect(hit.header("Cache-Status") == "serializerd; hit")
        #expect(hit.header("Serializerd-Source") == "cache")
        #expect(hit.header("ETag") == tag && hit.header("Age") != nil)
        #expect(hit.header("Cache-Control") == "max-age=60" && hit.header("Content-Type") == "application/json; charset=utf-8")
        #expect(try Self.requests(proxy, "fresh") == 1)
        // A HEAD is answered from GET's entry, without a body.
        let head = try proxy.get("/api/cached/fresh", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Cache-Status") == "serializerd; hit")
        #expect(try Self.requests(proxy, "fresh") == 1)
        // The client revalidates against serializerd's tag.
        let same = try proxy.get("/api/cached/fresh", headers: [("If-None-Match", "W/\"other\", " + tag)])
        #expect(same.status == 304 && same.body.isEmpty && same.header("ETag") == tag)
        let other = try proxy.get("/api/cached/fresh", headers: [("If-None-Match", "\"other\"")])
        #expect(other.status == 200 && other.body == miss.body)
        let scrape = try proxy.get("/metrics").text
        let metrics = Metrics(scrape)
        #expect(metrics["serializerd_cache_requests_total{route=\"api\",result=\"hit\"}"] == 4)
        #expect(metrics["serializerd_cache_requests_total{route=\"api\",result=\"miss\"}"] == 1)
        #expect(metrics["serializerd_cache_entries"] == 1)
        #expect((metrics["serializerd_cache_bytes"] ?? 0) > Double(miss.body.count))
        // The serializer ran once: for the miss.
        #expect(metrics["serializerd_serialization_duration_seconds_count{route=\"api\",serializer=\"json\"}"] == 1)
        try expectPromtoolAccepts(scrape)
        let listed = (proxy.json(try proxy.get("/-/cache"))?["routes"] as? [[String: Any]])?.first
        #expect(listed?["hits"] as? Int == 4 && listed?["misses"] as? Int == 1 && listed?["hit_ratio"] as? Double == 0.8)
        // The completion event names the cache's result.
        let events = proxy.json(try proxy.get("/-/recent"))?["events"] as? [[String: Any]] ?? []
        #expect(events.compactMap { $0["cache"] as? String }.filter { $0 == "hit" }.count == 4)
    }

    @Test func aStaleEntryIsRevalidatedAndA304SkipsTheSerializer() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        let target = "/api/cached/stale?cc=max-age=1"
        let first = try proxy.get(target)
        #expect(first.status == 200)
        let revalidated = Self.poll(proxy, target) { $0.header("Cache-Status")?.contains("fwd=stale") == true }
        #expect(revalidated?.header("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
        #expect(revalidated?.body == first.body && revalidated?.header("ETag") == first.header("ETag"))
        let state = try Self.state(proxy, "stale")
        #expect(state["not_modified"] as? Int == 1)
        let conditionals = state["conditionals"] as? [[String: Any]] ?? []
        #expect(conditionals.first?["if_none_match"] as? String == "\"v1\"")
        #expect(try Self.metric(proxy, "serializerd_cache_requests_total{route=\"api\",result=\"revalidated\"}") == 1)
        #expect(try Self.metric(proxy, "serializerd_serialization_duration_seconds_count{route=\"api\",serializer=\"json\"}") == 1)
        // Refreshed: a hit again, with no further upstream request.
        let requests = try Self.requests(proxy, "stale")
        #expect(try proxy.get(target).header("Cache-Status") == "serializerd; hit")
        #expect(try Self.requests(proxy, "stale") == requests)
        // A new version: the 200 replaces the entry.
        try Self.setMode(proxy, "stale", "v=2")
        let changed = Self.poll(proxy, target) { $0.header("Cache-Status")?.contains("fwd-status=200") == true }
        #expect(changed?.header("Cache-Status") == "serializerd; fwd=stale; fwd-status=200; stored")
        #expect(proxy.json(try #require(changed))?["v"] as? Int == 2)
        #expect(changed?.header("ETag") != first.header("ETag"))
    }

    @Test func lastModifiedAloneRevalidatesWithIfModifiedSince() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        let modified = "Mon,%2001%20Jan%202001%2000:00:00%20GMT"
        let target = "/api/cached/lm?cc=max-age=1&noetag&lm=\(modified)"
        #expect(try proxy.get(target).status == 200)
        _ = Self.poll(proxy, target) { $0.header("Cache-Status")?.contains("fwd=stale") == true }
        let conditionals = try Self.state(proxy, "lm")["conditionals"] as? [[String: Any]] ?? []
        #expect(conditionals.first?["if_modified_since"] as? String == "Mon, 01 Jan 2001 00:00:00 GMT")
        #expect(conditionals.first?["if_none_match"] is NSNull)
    }

    @Test func theClientsOwnDirectivesAreHonoured() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        #expect(try proxy.get("/api/cached/dir").status == 200)
        // no-cache and max-age=0: revalidated first (a 304 here); Pragma without Cache-Control too.
        for header in [("Cache-Control", "no-cache"), ("Cache-Control", "max-age=0"), ("Pragma", "no-cache")] {
            let reply = try proxy.get("/api/cached/dir", headers: [header])
            #expect(reply.header("Cache-Status") == "serializerd; fwd=stale; fwd-status=304", "\(header)")
        }
        // no-store: neither answered from nor stored.
        let bypass = try proxy.get("/api/cached/dir", headers: [("Cache-Control", "no-store")])
        #expect(bypass.header("Cache-Status") == "serializerd; fwd=request; fwd-status=200")
        #expect(try Self.requests(proxy, "dir") == 5)
        // only-if-cached: stored → hit; not stored → 504 cache-miss.
        #expect(try proxy.get("/api/cached/dir", headers: [("Cache-Control", "only-if-cached")]).header("Cache-Status") == "serializerd; hit")
        let missing = try proxy.get("/api/cached/never", headers: [("Cache-Control", "only-if-cached")])
        #expect(missing.status == 504 && proxy.json(missing)?["type"] as? String == "urn:serializerd:cache-miss")
        #expect(proxy.json(missing)?["code"] as? Int == -1008)
        #expect(missing.header("Cache-Status") == "serializerd; fwd=uri-miss")
        #expect(try Self.requests(proxy, "never") == 0)
        // Other methods are not consulted.
        let post = try proxy.get("/api/cached/dir", method: "POST", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        #expect(post.header("Cache-Status") == "serializerd; fwd=method; fwd-status=200")
        #expect(try Self.metric(proxy, "serializerd_cache_requests_total{route=\"api\",result=\"bypass\"}") == 2)
    }

    @Test func whatAResponseForbidsIsNeverStored() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        for (key, query) in [("ns", "cc=no-store"), ("pv", "cc=private,max-age=60"), ("ck", "cookie"), ("vs", "vary=*")] {
            for _ in 0..<2 {
                let reply = try proxy.get("/api/cached/\(key)?\(query)")
                #expect(reply.status == 200 && reply.header("Cache-Status")?.contains("stored") == false, "\(query)")
            }
            #expect(try Self.requests(proxy, key) == 2, "\(query)")
        }
        // Absurd numbers are clamped, not trusted: stored and fresh.
        let huge = "/api/cached/huge?cc=max-age=99999999999999999999999"
        #expect(try proxy.get(huge).header("Cache-Status")?.hasSuffix("stored") == true)
        #expect(try proxy.get(huge).header("Cache-Status") == "serializerd; hit")
        // A Date far in the future is no age at all: fresh for its max-age.
        let future = "/api/cached/future?date=Fri,%2001%20Jan%202100%2000:00:00%20GMT"
        #expect(try proxy.get(future).header("Cache-Status")?.hasSuffix("stored") == true)
        #expect(try proxy.get(future).header("Cache-Status") == "serializerd; hit")
        let negative = "/api/cached/neg?cc=max-age=-5"
        #expect(try proxy.get(negative).status == 200)
        #expect(try proxy.get(negative).header("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
    }

    @Test func clientsWithDifferentCredentialsNeverShareAnEntry() throws {
        let proxy = try ProxyHarness(routes: Self.cacheRoute())
        defer { proxy.finish() }
        // Authorization without public or s-maxage: not stored at all.
        for who in ["Bearer alice", "Bearer bob", "Bearer alice"] {
            let reply = try proxy.get("/api/cached/auth", headers: [("Authorization", who)])
            #expect(proxy.json(reply)?["who"] as? String == who)
            #expect(reply.header("Cache-Status")?.contains("stored") == false)
        }
        // public with Vary: Authorization: one variant each.
        let shared = "/api/cached/authv?cc=public,max-age=60&vary=Authorization"
        for who in ["Bearer alice", "Bearer bob", "Bearer alice", "Bearer bob"] {
            let reply = try proxy.get(shared, headers: [("Authorization", who)])
            #expect(proxy.json(reply)?["who"] as? String == who)
        }
        #expect(try Self.requests(proxy, "authv") == 2)
        // Vary on another field: each value its entry, a missing field its own.
        let varied = "/api/cached/vary?vary=X-User"
        for user in ["a", "b", "a", "b"] {
            #expect(proxy.json(try proxy.get(varied, headers: [("X-User", user)]))?["who"] as? String == user)
        }
        #expect(proxy.json(try proxy.get(varied))?["who"] is NSNull)
        #expect(try Self.requests(proxy, "vary") == 3)
        // Vary naming a hundred fields: stored, selected by all of them.
        let many = (0..<100).map { "X-H\($0)" }.joined(separator: ",")
        #expect(try proxy.get("/api/cached/many?vary=\(many)").status == 200)
        #expect(try proxy.get("/api/cached/many?vary=\(many)").header("Cache-Status") == "serializerd; hit")
        #expect(try proxy.get("/api/cached/many?vary=\(many)", headers: [("X-H7", "1")]).header("Cache-Status")?.contains("fwd=miss") == true)
    }
}
