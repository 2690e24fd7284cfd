import Foundation
import TestSupport
import Testing

/// What the cache keeps stays with what made it (DESIGN §3): an entry is served only to
/// routes that send the same request and make the same output; requests with unkeyed
/// forwarding headers neither read nor feed it; `only_cache` never reaches the upstream;
/// a 304 about another representation refreshes nothing.
@Suite(.timeLimit(.minutes(5)))
struct CacheIsolationTests {
    static func route(_ name: String, extra: String = "", cache: String = "{}") -> String {
        "  - name: \(name)\n    match: { prefix: /\(name)/ }\n    upstream: {stub}\n    cache: \(cache)\n" + extra
    }

    static func requests(_ proxy: ProxyHarness, _ key: String) throws -> Int { try CacheTests.requests(proxy, key) }

    @Test func aRouteWithoutTheCredentialIsNotServedWhatTheCredentialFetched() throws {
        let proxy = try ProxyHarness(routes: Self.route("keyed", extra: "    headers: { X-User: alice }\n") + Self.route("plain")
            + Self.route("offline", cache: "{ policy: only_cache }"))
        defer { proxy.finish() }
        let keyed = try proxy.get("/keyed/cached/cred")
        #expect(proxy.json(keyed)?["who"] as? String == "alice")
        let plain = try proxy.get("/plain/cached/cred")
        #expect(plain.status == 200 && plain.header("Cache-Status")?.contains("hit") == false)
        #expect(proxy.json(plain)?["who"] is NSNull, "\(plain.text)")
        #expect(try Self.requests(proxy, "cred") == 2)
        // A route that sends the same request and makes the same output shares the entry,
        // whatever its cache policy.
        let offline = try proxy.get("/offline/cached/cred")
        #expect(offline.status == 200 && offline.header("Cache-Status") == "serializerd; hit" && offline.body == plain.body)
        #expect(try Self.requests(proxy, "cred") == 2)
    }

    @Test func aJarRoutesLoggedInAnswerStaysWithTheJar() throws {
        let proxy = try ProxyHarness(routes: Self.route("jar", extra: "    cookies: jar\n") + Self.route("plain"))
        defer { proxy.finish() }
        // The upstream sets a session cookie, which the jar keeps and sends from then on.
        #expect(try proxy.get("/jar/json", headers: [("X-Echo-Set-Cookie", "session=s3cret; Path=/")]).status == 200)
        let mine = try proxy.get("/jar/cached/jar")
        #expect(proxy.json(mine)?["who"] as? String == "session=s3cret", "\(mine.text)")
        let theirs = try proxy.get("/plain/cached/jar")
        #expect(theirs.status == 200 && !theirs.text.contains("s3cret"), "\(theirs.text)")
        #expect(try Self.requests(proxy, "jar") == 2)
    }

    @Test func anEnvelopeRoutesOutputIsNotServedToAPlainRoute() throws {
        let proxy = try ProxyHarness(routes: Self.route("wrapped", extra: "    response: { serializer: raw }\n    output: { envelope: true }\n")
            + Self.route("plain"))
        defer { proxy.finish() }
        let wrapped = try proxy.get("/wrapped/cached/shape")
        #expect(proxy.json(wrapped)?["data"] != nil, "\(wrapped.text)")
        let plain = try proxy.get("/plain/cached/shape")
        #expect(proxy.json(plain)?["data"] == nil && proxy.json(plain)?["key"] as? String == "shape", "\(plain.text)")
        #expect(try Self.requests(proxy, "shape") == 2)
    }

    @Test func aForwardingHeaderNeitherReadsNorFeedsTheCache() throws {
        let proxy = try ProxyHarness(routes: Self.route("api"))
        defer { proxy.finish() }
        let names = ["X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port", "X-Original-URL", "X-Rewrite-URL",
                     "X-HTTP-Method-Override", "X-Method-Override"]
        for (n, name) in names.enumerated() {
            let key = "fwd\(n)"
            let poisoned = try proxy.get("/api/cached/\(key)", headers: [(name, "evil.example")])
            #expect(poisoned.status == 200 && poisoned.header("Cache-Status") == "serializerd; fwd=bypass; fwd-status=200", "\(name)")
            // Not stored: the next plain request asks the upstream.
            let plain = try proxy.get("/api/cached/\(key)")
            #expect(plain.header("Cache-Status")?.contains("stored") == true, "\(name): \(plain.header("Cache-Status") ?? "-")")
            #expect(try Self.requests(proxy, key) == 2, "\(name)")
            // Not served either: with an entry stored, the header still goes upstream.
            _ = try proxy.get("/api/cached/\(key)", headers: [(name, "evil.example")])
            #expect(try Self.requests(proxy, key) == 3, "\(name)")
            #expect(try proxy.get("/api/cached/\(key)").header("Cache-Status") == "serializerd; hit", "\(name)")
        }
    }

    @Test func onlyCacheNeverContactsTheUpstream() throws {
        let proxy = try ProxyHarness(routes: Self.route("offline", cache: "{ policy: only_cache }"))
        defer { proxy.finish() }
        for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] {
            let reply = try proxy.get("/offline/cached/never", method: method, body: method == "POST" ? Array("{}".utf8) : [])
            #expect(reply.status == 504, "\(method)")
            if method != "HEAD" { #expect(proxy.json(reply)?["type"] as? String == "urn:serializerd:cache-miss", "\(method)") }
        }
        let noStore = try proxy.get("/offline/cached/never", headers: [("Cache-Control", "no-store")])
        #expect(noStore.status == 504 && (proxy.json(noStore)?["detail"] as? String)?.contains("no-store") == true, "\(noStore.text)")
        let forwarded = try proxy.get("/offline/cached/never", headers: [("X-Forwarded-Host", "a.example")])
        #expect(forwarded.status == 504)
        #expect(try Self.requests(proxy, "never") == 0)
    }

    @Test func a304ForAnotherRepresentationIsAskedAgainInFull() throws {
        let proxy = try ProxyHarness(routes: Self.route("api"))
        defer { proxy.finish() }
        // no-cache: every request revalidates.
        let first = try proxy.get("/api/cached/moved?cc=no-cache")
        #expect(proxy.json(first)?["v"] as? Int == 1)
        // A matching 304 refreshes the entry without a new body.
        let same = try proxy.get("/api/cached/moved?cc=no-cache")
        #expect(same.header("Cache-Status")?.contains("fwd-status=304") == true && proxy.json(same)?["v"] as? Int == 1)
        // The upstream moves on, and answers every conditional request with a 304 naming v2.
        try CacheTests.setMode(proxy, "moved", "mode=moved304&v=2")
        let moved = try proxy.get("/api/cached/moved?cc=no-cache")
        #expect(moved.status == 200 && proxy.json(moved)?["v"] as? Int == 2, "\(moved.text)")
        let state = try CacheTests.state(proxy, "moved")
        #expect(state["requests"] as? Int == 4)
        // The last request went without validators.
        let conditionals = state["conditionals"] as? [[String: Any]] ?? []
        #expect(conditionals.count == 2, "\(conditionals)")
    }
}
