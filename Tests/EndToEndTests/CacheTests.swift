import Foundation
import TestSupport
import Testing

/// The response cache through the daemon and a real upstream (`/v1/cached/KEY` counts its
/// requests): a fresh hit byte for byte, its metrics as promtool reads them. Every rule
/// and policy is tested in process (ProxyTests: CacheRouteTests, CachePolicyRouteTests).
@Suite(.timeLimit(.minutes(5)))
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
}
