import Cache
import HTTPCore
import Testing

@Suite struct ResponseCacheTests {
    static let fresh = Freshness(status: 200, fields: [("Cache-Control", "max-age=60")], requestedAt: 0, receivedAt: 0, wallNow: 0)

    static func response(_ body: String, route: String = "api", vary: [String] = [], request: [String: String] = [:]) -> StoredResponse {
        StoredResponse(status: 200, fields: [("ETag", "\"v\"")], body: Array(body.utf8), serializer: "json", freshness: fresh,
                       vary: vary, request: { request[$0] }, route: route)
    }

    static func key(_ path: String) -> CacheKey { CacheKey(method: "GET", url: "http://up.test" + path) }

    static func body(_ cache: ResponseCache, _ path: String, _ request: [String: String] = [:]) -> String? {
        cache.lookup(key(path), request: { request[$0] }).map { String(decoding: $0.body, as: UTF8.self) }
    }

    @Test func theLeastRecentlyUsedKeyGoesFirst() {
        // Every key lands in one of 16 shards; a budget of one entry a shard makes each
        // store evict whatever else its shard held.
        // Every body below has 8 bytes: every entry costs the same.
        func padded(_ path: String) -> String { path + String(repeating: "-", count: 8 - path.count) }
        let one = Self.response(padded("/k")).cost
        let cache = ResponseCache(maxBytes: one * ResponseCache.shardCount)
        cache.store(Self.key("/a"), Self.response(padded("/a")))
        #expect(Self.body(cache, "/a") == padded("/a"))
        let cache2 = ResponseCache(maxBytes: 3 * one * ResponseCache.shardCount)
        // Find three keys of one shard by probing: store, then count what survives.
        var same: [String] = []
        for n in 0..<500 where same.count < 4 {
            let probe = ResponseCache(maxBytes: one * ResponseCache.shardCount)
            probe.store(Self.key("/k0"), Self.response(padded("/k0")))
            probe.store(Self.key("/k\(n)"), Self.response(padded("/k\(n)")))
            if n == 0 || Self.body(probe, "/k0") == nil { same.append("/k\(n)") }
        }
        #expect(same.count == 4)
        for path in same.prefix(3) { cache2.store(Self.key(path), Self.response(padded(path))) }
        #expect(Self.body(cache2, same[0]) == padded(same[0]))        // the oldest, used again
        cache2.store(Self.key(same[3]), Self.response(padded(same[3])))  // over the shard's share
        #expect(Self.body(cache2, same[1]) == nil)                    // the least recently used went
        #expect([same[0], same[2], same[3]].allSatisfy { Self.body(cache2, $0) == padded($0) })
    }

    @Test func varyPicksTheVariantAndAStoreReplacesTheOneItSelects() {
        let cache = ResponseCache(maxBytes: 1 << 20)
        cache.store(Self.key("/v"), Self.response("json", vary: ["accept"], request: ["accept": "application/json"]))
        cache.store(Self.key("/v"), Self.response("xml", vary: ["accept"], request: ["accept": "application/xml"]))
        cache.store(Self.key("/v"), Self.response("none", vary: ["accept"]))
        #expect(Self.body(cache, "/v", ["accept": "application/json"]) == "json")
        #expect(Self.body(cache, "/v", ["accept": " application/xml "]) == "xml")
        #expect(Self.body(cache, "/v") == "none")
        #expect(Self.body(cache, "/v", ["accept": "text/html"]) == nil)
        cache.store(Self.key("/v"), Self.response("json2", vary: ["accept"], request: ["accept": "application/json"]))
        #expect(Self.body(cache, "/v", ["accept": "application/json"]) == "json2")
        #expect(cache.usage().entries == 3)
        // A key's variants are bounded: the oldest go.
        for n in 0..<100 { cache.store(Self.key("/many"), Self.response("\(n)", vary: ["x-n"], request: ["x-n": "\(n)"])) }
        #expect(cache.usage().entries == 3 + ResponseCache.maxVariants)
        #expect(Self.body(cache, "/many", ["x-n": "99"]) == "99" && Self.body(cache, "/many", ["x-n": "0"]) == nil)
    }

    @Test func purgeByRouteOrAll() {
        let cache = ResponseCache(maxBytes: 1 << 20)
        for n in 0..<10 { cache.store(Self.key("/p\(n)"), Self.response("\(n)", route: n % 2 == 0 ? "even" : "odd")) }
        #expect(cache.usage().byRoute["even"]?.entries == 5)
        #expect(cache.purge(route: "even") == 5)
        #expect(Self.body(cache, "/p0") == nil && Self.body(cache, "/p1") == "1")
        #expect(cache.purge() == 5 && cache.usage().entries == 0 && cache.usage().bytes == 0)
    }

    /// 100,000 distinct URLs: memory stays within max_bytes, the newest are there.
    @Test func aKeyFloodStaysWithinTheBudget() {
        let budget = 4 << 20
        let cache = ResponseCache(maxBytes: budget)
        let body = String(repeating: "x", count: 1000)
        for n in 0..<100_000 { cache.store(Self.key("/flood/\(n)"), Self.response(body)) }
        let usage = cache.usage()
        #expect(usage.bytes <= budget && usage.bytes > budget / 2)
        #expect(Self.body(cache, "/flood/99999") == body && Self.body(cache, "/flood/0") == nil)
        // Larger than a shard's share: never stored.
        cache.store(Self.key("/huge"), Self.response(String(repeating: "y", count: budget)))
        #expect(Self.body(cache, "/huge") == nil)
    }
}
