import Cache
import HTTPCore
import Synchronization
import Testing

/// What the cache does with a request, by policy and by the client's directives.
@Suite struct CacheChoiceTests {
    /// An entry received at 0 with `fields`; its age at `now` is `now` seconds.
    static func entry(_ fields: HeaderFields = [("Cache-Control", "max-age=60")], etag: String? = "\"u1\"") -> StoredResponse {
        StoredResponse(status: 200, fields: fields, body: Array("{}".utf8), serializer: "json",
                       freshness: Freshness(status: 200, fields: fields, requestedAt: 0, receivedAt: 0, wallNow: 0),
                       vary: [], request: { _ in nil }, route: "api", upstreamETag: etag)
    }

    static func choose(_ request: String = "", policy: CachePolicy = .protocol, method: String = "GET",
                       stored: StoredResponse? = entry(), known: Bool = true, at now: Double) -> String {
        let control = CacheControl(request.isEmpty ? [] : [request])
        switch CacheChoice.of(policy: policy, method: method, request: control, stored: stored, keyKnown: known, now: now) {
        case .hit: return "hit"
        case .revalidate: return "revalidate"
        case .forward(let fwd, let result, let stale, let store):
            return "forward \(fwd) \(result.rawValue)\(stale == nil ? "" : " stale")\(store ? " store" : "")"
        case .unsatisfiable(let fwd): return "unsatisfiable \(fwd)"
        }
    }

    @Test func protocolServesFreshAndRevalidatesStale() {
        #expect(Self.choose(at: 10) == "hit")
        #expect(Self.choose(at: 61) == "revalidate")
        // No validator: a new request, the old entry kept to stand in on error.
        #expect(Self.choose(stored: Self.entry(etag: nil), at: 61) == "forward stale miss stale store")
        #expect(Self.choose(stored: nil, known: false, at: 0) == "forward uri-miss miss store")
        #expect(Self.choose(stored: nil, known: true, at: 0) == "forward miss miss store")
        // The response's own no-cache: always revalidated.
        #expect(Self.choose(stored: Self.entry([("Cache-Control", "no-cache, max-age=60")]), at: 1) == "revalidate")
    }

    @Test func theClientsDirectives() {
        #expect(Self.choose("no-store", at: 1) == "forward request bypass")
        #expect(Self.choose("no-cache", at: 1) == "revalidate")
        #expect(Self.choose("max-age=0", at: 1) == "revalidate")
        #expect(Self.choose("max-age=5", at: 4) == "hit")
        #expect(Self.choose("max-age=5", at: 6) == "revalidate")
        #expect(Self.choose("min-fresh=30", at: 20) == "hit")
        #expect(Self.choose("min-fresh=30", at: 40) == "revalidate")
        #expect(Self.choose("max-stale=10", at: 65) == "hit")
        #expect(Self.choose("max-stale=10", at: 75) == "revalidate")
        #expect(Self.choose("max-stale", at: 10_000) == "hit")
        // must-revalidate and s-maxage forbid a stale answer, max-stale or not.
        #expect(Self.choose("max-stale", stored: Self.entry([("Cache-Control", "max-age=60, must-revalidate")]), at: 70) == "revalidate")
        #expect(Self.choose("max-stale", stored: Self.entry([("Cache-Control", "s-maxage=60")]), at: 70) == "revalidate")
        #expect(Self.choose("only-if-cached", at: 10) == "hit")
        #expect(Self.choose("only-if-cached", at: 70) == "unsatisfiable stale")
        #expect(Self.choose("only-if-cached", stored: nil, known: false, at: 0) == "unsatisfiable uri-miss")
    }

    @Test func thePolicies() {
        #expect(Self.choose(policy: .reload, at: 1) == "forward bypass bypass store")
        #expect(Self.choose(policy: .preferCache, at: 100_000) == "hit")
        #expect(Self.choose("no-cache", policy: .preferCache, at: 1) == "revalidate")
        #expect(Self.choose(policy: .preferCache, stored: nil, known: false, at: 0) == "forward uri-miss miss store")
        #expect(Self.choose(policy: .onlyCache, at: 100_000) == "hit")
        #expect(Self.choose("no-cache", policy: .onlyCache, at: 1) == "hit")
        #expect(Self.choose(policy: .onlyCache, stored: nil, known: false, at: 0) == "unsatisfiable uri-miss")
        // only_cache never goes upstream: not for another method, nor for the client's no-store.
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            #expect(Self.choose(policy: .onlyCache, method: method, at: 0) == "unsatisfiable method")
            #expect(Self.choose(method: method, at: 0) == "forward method bypass")
        }
        #expect(Self.choose("no-store", policy: .onlyCache, at: 0) == "unsatisfiable request")
        #expect(Self.choose("only-if-cached, no-store", at: 0) == "unsatisfiable request")
        #expect(Self.choose(method: "HEAD", at: 1) == "hit")
    }

    @Test func anUnkeyedForwardingHeaderNeitherReadsNorFeedsTheCache() {
        func choose(_ policy: CachePolicy, stored: StoredResponse? = Self.entry()) -> String {
            switch CacheChoice.of(policy: policy, method: "GET", request: CacheControl([]), stored: stored, keyKnown: true, now: 1,
                                  unkeyed: true) {
            case .forward(let fwd, let result, let stale, let store): "forward \(fwd) \(result.rawValue) \(stale != nil) \(store)"
            case .unsatisfiable(let fwd): "unsatisfiable \(fwd)"
            default: "other"
            }
        }
        #expect(choose(.protocol) == "forward bypass bypass false false")
        #expect(choose(.preferCache) == "forward bypass bypass false false")
        #expect(choose(.reload) == "forward bypass bypass false false")
        #expect(choose(.onlyCache) == "unsatisfiable bypass")
    }

    @Test func staleStandsInWithinItsWindowOnly() {
        let entry = Self.entry()
        #expect(entry.mayServeStale(window: 30, responseDirective: false, at: 80))
        #expect(!entry.mayServeStale(window: 30, responseDirective: false, at: 95))
        #expect(!entry.mayServeStale(window: nil, responseDirective: true, at: 61))
        let directive = Self.entry([("Cache-Control", "max-age=60, stale-if-error=20")])
        #expect(directive.mayServeStale(window: nil, responseDirective: true, at: 75))
        #expect(!directive.mayServeStale(window: nil, responseDirective: false, at: 75))
        #expect(!directive.mayServeStale(window: nil, responseDirective: true, at: 85))
        let strict = Self.entry([("Cache-Control", "max-age=60, must-revalidate")])
        #expect(!strict.mayServeStale(window: 600, responseDirective: true, at: 61))
    }

    @Test func aRefreshKeepsTheOutputAndTakesTheNewFields() {
        let entry = Self.entry([("Cache-Control", "max-age=60"), ("Date", "Mon, 01 Jan 2001 00:00:00 GMT"), ("Link", "<a>")])
        let merged = entry.merging([("cache-control", "max-age=300"), ("Date", "Tue, 02 Jan 2001 00:00:00 GMT")])
        #expect(merged.pairs.map(\.0) == ["Link", "cache-control", "Date"])
        let freshness = Freshness(status: 200, fields: merged, requestedAt: 100, receivedAt: 100, wallNow: 0)
        let refreshed = entry.refreshed(fields: merged, upstreamETag: nil, freshness: freshness)
        #expect(refreshed.body == entry.body && refreshed.tag == entry.tag && refreshed.upstreamETag == "\"u1\"")
        #expect(refreshed.freshness.lifetime == 300 && refreshed.control.maxAge == .value(300))
    }

    @Test func theTagIsStableAndTellsOutputsApart() {
        let a = OutputTag.of(Array("{\"a\":1}".utf8))
        #expect(a == OutputTag.of(Array("{\"a\":1}".utf8)))
        #expect(a.hasPrefix("\"") && a.hasSuffix("-7\""))
        var seen: Set<String> = []
        // Every length from 0 to 40 and every single-byte change of a 40-byte output differ.
        let base = [UInt8](repeating: UInt8(ascii: "x"), count: 40)
        for n in 0...40 { seen.insert(OutputTag.of(Array(base.prefix(n)))) }
        for at in 0..<40 {
            var changed = base
            changed[at] = UInt8(ascii: "y")
            seen.insert(OutputTag.of(changed))
        }
        #expect(seen.count == 41 + 40)
    }

    @Test func ifNoneMatchReadsTheListAsTheRFCWritesIt() {
        let tag = "\"abc-1\""
        #expect(OutputTag.ifNoneMatch("\"abc-1\"", matches: tag))
        #expect(OutputTag.ifNoneMatch("W/\"abc-1\"", matches: tag))
        #expect(OutputTag.ifNoneMatch("\"x\", \"abc-1\"", matches: tag))
        #expect(OutputTag.ifNoneMatch("*", matches: tag))
        #expect(!OutputTag.ifNoneMatch("\"abc\"", matches: tag))
        #expect(!OutputTag.ifNoneMatch("abc-1", matches: tag))
        #expect(!OutputTag.ifNoneMatch("\"abc-1", matches: tag))
        #expect(!OutputTag.ifNoneMatch("", matches: tag))
    }

    @Test func oneLeaderPerKeyAndEveryFollowerWoken() {
        let table = MissTable()
        let key = CacheKey(method: "GET", url: "http://up.test/a")
        let woken = Atomic(0)
        #expect(table.join(key) { woken.add(1, ordering: .relaxed) })
        #expect(!table.join(key) { woken.add(1, ordering: .relaxed) })
        #expect(!table.join(key) { woken.add(1, ordering: .relaxed) })
        #expect(!table.lead(key))
        #expect(table.inFlight == 1)
        table.finish(key)
        #expect(woken.load(ordering: .relaxed) == 2 && table.inFlight == 0)
        #expect(table.lead(key))
        table.finish(key)
        #expect(woken.load(ordering: .relaxed) == 2)
    }
}
