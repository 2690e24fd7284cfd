import Cache
import HTTPCore
import Testing

/// RFC 9111's rules for a shared cache, case by case after the ideas of the http-tests
/// cache-tests suite (freshness, heuristics, invalid and huge values, Vary, no-store,
/// private, Authorization).
@Suite struct CacheControlTests {
    @Test(arguments: [
        ("max-age=60", CacheControl.Seconds.value(60)),
        ("MAX-AGE=60", .value(60)),
        ("max-age=\"60\"", .value(60)),
        ("max-age = 60", .value(60)),
        ("max-age=60, max-age=60", .value(60)),
        ("max-age=60, max-age=30", .invalid),
        ("max-age=abc", .invalid),
        ("max-age=-1", .invalid),
        ("max-age=", .invalid),
        ("max-age", .invalid),
        ("max-age=9223372036854775808000", .value(CacheControl.maxSeconds)),
        ("public, max-age=3600, must-revalidate", .value(3600)),
        ("no-cache=\"Set-Cookie, X-A\", max-age=5", .value(5)),
        ("x-ext=\"a,b\", max-age=7", .value(7)),
        ("", .absent),
        ("s-maxage=5", .absent),
    ])
    func maxAgeIsReadAsRFC9111Says(line: String, expected: CacheControl.Seconds) {
        #expect(CacheControl([line]).maxAge == expected, "\(line)")
    }

    @Test func directivesSpreadOverFieldLinesAndFlags() {
        let c = CacheControl(["no-store, PRIVATE", "public,must-revalidate", "only-if-cached, max-stale", "no-cache=\"a\""])
        #expect(c.noStore && c.isPrivate && c.isPublic && c.mustRevalidate && c.onlyIfCached && c.maxStaleAny && c.noCache)
        #expect(!CacheControl(["nostore, no-store-x"]).noStore)
        #expect(CacheControl(["max-stale=30, min-fresh=5, stale-if-error=600"]) == {
            var c = CacheControl(); c.maxStale = .value(30); c.minFresh = .value(5); c.staleIfError = .value(600); return c
        }())
    }

    @Test func aHugeListIsReadToItsEnd() {
        // 100,000 unknown directives (about 1 MB), then the one that counts.
        let line = String(repeating: "x-unknown=\"a,b\", ", count: 100_000) + "max-age=7"
        #expect(CacheControl([line]).maxAge == .value(7))
        #expect(CacheControl(Array(repeating: "max-age=7", count: 10_000)).maxAge == .value(7))
    }
}

@Suite struct FreshnessTests {
    static let now = 1_800_000_000.0
    static let date = "Fri, 15 Jan 2027 08:00:00 GMT"   // now
    static let dateSeconds = HTTPDate.seconds(date)!

    static func fresh(_ fields: HeaderFields, status: Int = 200, age: Double = 0) -> (lifetime: Int, fresh: Bool, heuristic: Bool) {
        let f = Freshness(status: status, fields: fields, requestedAt: 100, receivedAt: 100, wallNow: dateSeconds)
        return (f.lifetime, f.isFresh(at: 100 + age), f.heuristic)
    }

    @Test func sMaxAgeBeatsMaxAgeBeatsExpires() {
        let expires = "Fri, 15 Jan 2027 09:00:00 GMT"   // an hour after Date
        #expect(Self.fresh([("Date", Self.date), ("Expires", expires)]).lifetime == 3600)
        #expect(Self.fresh([("Date", Self.date), ("Expires", expires), ("Cache-Control", "max-age=60")]).lifetime == 60)
        #expect(Self.fresh([("Date", Self.date), ("Cache-Control", "max-age=60, s-maxage=10")]).lifetime == 10)
    }

    @Test func invalidOrPastExpiresAndInvalidMaxAgeAreStale() {
        #expect(Self.fresh([("Date", Self.date), ("Expires", "0")]).fresh == false)
        #expect(Self.fresh([("Date", Self.date), ("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")]).fresh == false)
        #expect(Self.fresh([("Cache-Control", "max-age=abc"), ("Expires", "Fri, 15 Jan 2027 09:00:00 GMT")]).fresh == false)
        #expect(Self.fresh([("Cache-Control", "max-age=60, max-age=120")]).fresh == false)
        #expect(Self.fresh([]).lifetime == 0)
    }

    @Test func ageCountsTheAgeFieldTheDelayAndResidentTime() {
        #expect(Self.fresh([("Cache-Control", "max-age=60"), ("Age", "50")], age: 5).fresh)
        #expect(!Self.fresh([("Cache-Control", "max-age=60"), ("Age", "50")], age: 11).fresh)
        #expect(!Self.fresh([("Cache-Control", "max-age=60"), ("Age", "9999999999999999999")]).fresh)
        // A Date in the future gives no negative age; one in the past ages the answer.
        #expect(Self.fresh([("Cache-Control", "max-age=60"), ("Date", "Sun, 01 Jan 2090 00:00:00 GMT")], age: 59).fresh)
        #expect(!Self.fresh([("Cache-Control", "max-age=60"), ("Date", "Fri, 15 Jan 2027 07:59:00 GMT")], age: 1).fresh)
        // A huge max-age is clamped, not overflowed.
        #expect(Self.fresh([("Cache-Control", "max-age=99999999999999999999999")]).lifetime == CacheControl.maxSeconds)
    }

    @Test func theHeuristicIsATenthOfTheTimeSinceLastModified() {
        let modified = "Wed, 05 Jan 2027 08:00:00 GMT"   // ten days before Date
        let h = Self.fresh([("Date", Self.date), ("Last-Modified", modified)])
        #expect(h.lifetime == 86_400 && h.heuristic)
        #expect(Self.fresh([("Date", Self.date), ("Last-Modified", modified)], status: 500).lifetime == 0)
    }

    @Test func allThreeDateFormsAreRead() {
        let seconds = 784_111_777.0   // RFC 9110's example
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT") == seconds)
        #expect(HTTPDate.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == seconds)
        #expect(HTTPDate.seconds("Sun Nov  6 08:49:37 1994") == seconds)
        for bad in ["", "0", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 25:49:37 GMT",
                    "Sun Nov  6 08:49:37 94", "-1"] {
            #expect(HTTPDate.seconds(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct StorabilityTests {
    static func storable(_ method: String = "GET", status: Int = 200, request: [(String, String)] = [],
                         response: [(String, String)]) -> Storability {
        Storability.of(method: method, status: status, requestFields: HeaderFields(request), responseFields: HeaderFields(response))
    }

    @Test func sharedCacheRules() {
        let fresh = [("Cache-Control", "max-age=60")]
        #expect(Self.storable(response: fresh) == .storable(vary: []))
        #expect(Self.storable("POST", response: fresh) == .notStorable("method POST"))
        #expect(Self.storable(response: [("Cache-Control", "max-age=60, no-store")]) == .notStorable("no-store"))
        #expect(Self.storable(request: [("cache-control", "no-store")], response: fresh) == .notStorable("no-store"))
        #expect(Self.storable(response: [("Cache-Control", "private, max-age=60")]) == .notStorable("private"))
        #expect(Self.storable(response: fresh + [("Set-Cookie", "a=1")]) == .notStorable("Set-Cookie"))
        #expect(Self.storable(request: [("Authorization", "Bearer x")], response: fresh) == .notStorable("Authorization"))
        #expect(Self.storable(request: [("Authorization", "Bearer x")], response: [("Cache-Control", "public, max-age=60")]) == .storable(vary: []))
        #expect(Self.storable(request: [("Authorization", "Bearer x")], response: [("Cache-Control", "s-maxage=60")]) == .storable(vary: []))
        #expect(Self.storable(status: 500, response: []) == .notStorable("status 500 without freshness information"))
        #expect(Self.storable(status: 500, response: [("ETag", "\"v\"")]) == .storable(vary: []))
    }

    @Test func varyNamesTheSelectingFieldsAndStarIsNeverStored() {
        #expect(Self.storable(response: [("Cache-Control", "max-age=5"), ("Vary", "Accept-Encoding, accept"), ("vary", " X-A ,accept")])
                == .storable(vary: ["accept", "accept-encoding", "x-a"]))
        #expect(Self.storable(response: [("Cache-Control", "max-age=5"), ("Vary", "Accept, *")]) == .notStorable("Vary: *"))
        let hundred = (0..<100).map { "X-H\($0)" }.joined(separator: ", ")
        if case .storable(let vary) = Self.storable(response: [("Cache-Control", "max-age=5"), ("Vary", hundred)]) {
            #expect(vary.count == 100)
        } else {
            Issue.record("a Vary of 100 names is storable")
        }
    }
}
