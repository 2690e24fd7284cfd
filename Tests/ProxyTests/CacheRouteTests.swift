import Foundation
@testable import Proxy
import Testing

/// A caching route's YAML (`{stub}` is the upstream).
func cacheRoute(_ name: String = "api", prefix: String = "/api/", cache: String = "{}") -> String {
    "  - name: \(name)\n    match: { prefix: \(prefix) }\n    upstream: {stub}\n    cache: \(cache)\n"
}

/// The response cache (DESIGN §2 `cache:`, §3 *Caching*) through a route, in process,
/// against a resource that counts its requests (`cached/KEY`); time moves when the test
/// moves it.
@Suite struct CacheRouteTests {
    @Test func aStaleEntryIsRevalidatedAndA304SkipsTheSerializer() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let target = "/api/cached/stale?cc=max-age=1"
        let first = proxy.get(target)
        #expect(first.status == 200)
        proxy.clock.advance(0.5)
        #expect(proxy.get(target).replyHeader("Cache-Status") == "serializerd; hit")
        proxy.clock.advance(1)
        let revalidated = proxy.get(target)
        #expect(revalidated.replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
        #expect(revalidated.replyBody == first.replyBody && revalidated.replyHeader("ETag") == first.replyHeader("ETag"))
        #expect(proxy.upstream.resources["stale"]?.notModified == 1)
        #expect(proxy.upstream.resources["stale"]?.conditionals.first?.ifNoneMatch == "\"v1\"")
        #expect(proxy.metric("serializerd_cache_requests_total{route=\"api\",result=\"revalidated\"}") == 1)
        #expect(proxy.metric("serializerd_serialization_duration_seconds_count{route=\"api\",serializer=\"json\"}") == 1)
        // Refreshed: a hit again, with no further upstream request.
        #expect(proxy.get(target).replyHeader("Cache-Status") == "serializerd; hit")
        #expect(proxy.requests("stale") == 2)
        // A new version: the 200 replaces the entry.
        proxy.upstream.resources["stale"]?.version = 2
        proxy.clock.advance(1.5)
        let changed = proxy.get(target)
        #expect(changed.replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=200; stored")
        #expect(changed.replyJSON?["v"] as? Int == 2)
        #expect(changed.replyHeader("ETag") != first.replyHeader("ETag"))
    }

    @Test func lastModifiedAloneRevalidatesWithIfModifiedSince() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        let target = "/api/cached/lm?cc=max-age=1&noetag&lm=Mon,%2001%20Jan%202001%2000:00:00%20GMT"
        #expect(proxy.get(target).status == 200)
        proxy.clock.advance(2)
        #expect(proxy.get(target).replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=200; stored")
        let conditional = proxy.upstream.resources["lm"]?.conditionals.first
        #expect(conditional?.ifModifiedSince == "Mon, 01 Jan 2001 00:00:00 GMT" && conditional?.ifNoneMatch == nil)
    }

    @Test func theClientsOwnDirectivesAreHonoured() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        #expect(proxy.get("/api/cached/dir").status == 200)
        // no-cache and max-age=0: revalidated first (a 304 here); Pragma without Cache-Control too.
        for header in [("Cache-Control", "no-cache"), ("Cache-Control", "max-age=0"), ("Pragma", "no-cache")] {
            #expect(proxy.get("/api/cached/dir", headers: [header]).replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=304",
                    "\(header)")
        }
        // no-store: neither answered from nor stored.
        let bypass = proxy.get("/api/cached/dir", headers: [("Cache-Control", "no-store")])
        #expect(bypass.replyHeader("Cache-Status") == "serializerd; fwd=request; fwd-status=200")
        #expect(proxy.requests("dir") == 5)
        // max-stale and min-fresh move the line between fresh and stale.
        proxy.clock.advance(61)
        #expect(proxy.get("/api/cached/dir", headers: [("Cache-Control", "only-if-cached")]).status == 504)
        #expect(proxy.get("/api/cached/dir", headers: [("Cache-Control", "max-stale=5")]).replyHeader("Cache-Status") == "serializerd; hit")
        #expect(proxy.get("/api/cached/dir", headers: [("Cache-Control", "min-fresh=10")]).replyHeader("Cache-Status")?
            .contains("fwd=stale") == true)
        // only-if-cached: stored → hit; not stored → 504 cache-miss.
        #expect(proxy.get("/api/cached/dir", headers: [("Cache-Control", "only-if-cached")]).replyHeader("Cache-Status")
            == "serializerd; hit")
        let missing = proxy.get("/api/cached/never", headers: [("Cache-Control", "only-if-cached")])
        #expect(missing.status == 504 && missing.replyJSON?["type"] as? String == "urn:serializerd:cache-miss")
        #expect(missing.replyJSON?["code"] as? Int == -1008)
        #expect(missing.replyHeader("Cache-Status") == "serializerd; fwd=uri-miss")
        #expect(proxy.requests("never") == 0)
        // Other methods are not consulted.
        let post = proxy.get("/api/cached/dir", method: "POST", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        #expect(post.replyHeader("Cache-Status") == "serializerd; fwd=method; fwd-status=200")
        #expect(proxy.metric("serializerd_cache_requests_total{route=\"api\",result=\"bypass\"}") == 2)
    }

    @Test func whatAResponseForbidsIsNeverStored() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        for (key, query) in [("ns", "cc=no-store"), ("pv", "cc=private,max-age=60"), ("ck", "cookie"), ("vs", "vary=*")] {
            for _ in 0..<2 {
                let reply = proxy.get("/api/cached/\(key)?\(query)")
                #expect(reply.status == 200 && reply.replyHeader("Cache-Status")?.contains("stored") == false, "\(query)")
            }
            #expect(proxy.requests(key) == 2, "\(query)")
        }
        // Absurd numbers are clamped, not trusted: stored and fresh.
        let huge = "/api/cached/huge?cc=max-age=99999999999999999999999"
        #expect(proxy.get(huge).replyHeader("Cache-Status")?.hasSuffix("stored") == true)
        proxy.clock.advance(86_400 * 365)
        #expect(proxy.get(huge).replyHeader("Cache-Status") == "serializerd; hit")
        // A Date far in the future is no age at all: fresh for its max-age.
        let future = "/api/cached/future?date=Fri,%2001%20Jan%202100%2000:00:00%20GMT"
        #expect(proxy.get(future).replyHeader("Cache-Status")?.hasSuffix("stored") == true)
        #expect(proxy.get(future).replyHeader("Cache-Status") == "serializerd; hit")
        let negative = "/api/cached/neg?cc=max-age=-5"
        #expect(proxy.get(negative).status == 200)
        #expect(proxy.get(negative).replyHeader("Cache-Status") == "serializerd; fwd=stale; fwd-status=304")
    }

    @Test func clientsWithDifferentCredentialsNeverShareAnEntry() throws {
        let proxy = try InProcessProxy(routes: cacheRoute())
        // Authorization without public or s-maxage: not stored at all.
        for who in ["Bearer alice", "Bearer bob", "Bearer alice"] {
            let reply = proxy.get("/api/cached/auth", headers: [("Authorization", who)])
            #expect(reply.replyJSON?["who"] as? String == who)
            #expect(reply.replyHeader("Cache-Status")?.contains("stored") == false)
        }
        // public with Vary: Authorization: one variant each.
        let shared = "/api/cached/authv?cc=public,max-age=60&vary=Authorization"
        for who in ["Bearer alice", "Bearer bob", "Bearer alice", "Bearer bob"] {
            #expect(proxy.get(shared, headers: [("Authorization", who)]).replyJSON?["who"] as? String == who)
        }
        #expect(proxy.requests("authv") == 2)
        // Vary on another field: each value its entry, a missing field its own.
        let varied = "/api/cached/vary?vary=X-User"
        for user in ["a", "b", "a", "b"] {
            #expect(proxy.get(varied, headers: [("X-User", user)]).replyJSON?["who"] as? String == user)
        }
        #expect(proxy.get(varied).replyJSON?["who"] is NSNull)
        #expect(proxy.requests("vary") == 3)
        // Vary naming a hundred fields: stored, selected by all of them.
        let many = (0..<100).map { "X-H\($0)" }.joined(separator: ",")
        #expect(proxy.get("/api/cached/many?vary=\(many)").status == 200)
        #expect(proxy.get("/api/cached/many?vary=\(many)").replyHeader("Cache-Status") == "serializerd; hit")
        #expect(proxy.get("/api/cached/many?vary=\(many)", headers: [("X-H7", "1")]).replyHeader("Cache-Status")?
            .contains("fwd=miss") == true)
    }
}
