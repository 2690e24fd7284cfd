import Resilience
import Testing

@Suite struct TokenBucketTests {
    /// The wait `reserve` gives, in whole milliseconds (nil when refused).
    static func reserve(_ bucket: inout TokenBucket, now: Double, start: Double? = nil, within limit: Double) -> Int? {
        guard case .after(let wait) = bucket.reserve(now: now, start: start, within: limit) else { return nil }
        return Int((wait * 1000).rounded())
    }

    /// The most grants in any window of `period` seconds (half open), windows starting at
    /// every grant.
    static func busiest(_ granted: [Double], period: Double) -> Int {
        granted.map { start in granted.filter { $0 >= start && $0 < start + period }.count }.max() ?? 0
    }

    @Test func aFullBucketServesAPeriodsWorthThenTokensComeBackAPeriodOn() {
        var bucket = TokenBucket(count: 10, period: 1)
        let burst = (0..<10).map { _ in Self.reserve(&bucket, now: 100, within: 0) }
        #expect(burst == Array(repeating: 0, count: 10))
        // Empty: the first token comes back a period (and 1 %) after it was taken; a
        // request that cannot wait that long is refused, told how long, and takes nothing.
        guard case .refused(let needed) = bucket.reserve(now: 100, within: 0.5) else { Issue.record("granted"); return }
        #expect(abs(needed - 1.01) < 1e-9)
        let patient = Self.reserve(&bucket, now: 100, within: 5)
        let next = Self.reserve(&bucket, now: 100.5, within: 5)
        #expect(patient == 1010 && next == 510)
        // Later requests never go before earlier ones.
        let after = Self.reserve(&bucket, now: 101.2, within: 5)
        #expect(after == 0)
    }

    @Test func noWindowOfAPeriodSeesMoreThanTheRate() {
        // Offered 100 a second for 10 s, each willing to wait 1 s: granted in the order
        // asked, and never more than 10 in any second, the first included.
        var bucket = TokenBucket(count: 10, period: 1)
        var granted: [Double] = []
        var refused = 0
        for k in 0..<1_000 {
            let now = Double(k) / 100
            switch bucket.reserve(now: now, within: 1) {
            case .after(let wait): granted.append(now + wait)
            case .refused: refused += 1
            }
        }
        #expect(granted == granted.sorted())
        #expect(Self.busiest(granted, period: 1) == 10)
        // 10 a second for 10 s (1 % slower), and those still waiting when demand ends.
        #expect(granted.count >= 105 && granted.count <= 110, "\(granted.count)")
        #expect(granted.count + refused == 1_000)
    }

    @Test func aMinuteRateHoldsAMinutesWorth() {
        var bucket = TokenBucket(count: 60, period: 60)
        #expect(bucket.capacity == 60 && bucket.rate == 1)
        let burst = (0..<60).map { _ in Self.reserve(&bucket, now: 0, within: 0) }
        let refused = Self.reserve(&bucket, now: 1, within: 0.5)
        #expect(burst == Array(repeating: 0, count: 60) && refused == nil)
        // Idle for an hour, it holds no more than a minute's worth.
        let later = (0..<61).map { _ in Self.reserve(&bucket, now: 3_600, within: 0) }
        #expect(later == Array(repeating: 0, count: 60) + [nil])
    }

    @Test func tokensWaitForAPauseToEnd() {
        var bucket = TokenBucket(count: 2, period: 1)
        // A pause until 12 at 10: the token is used at 12, the next too, the third a period on.
        let first = Self.reserve(&bucket, now: 10, start: 12, within: 5)
        let second = Self.reserve(&bucket, now: 10, start: 12, within: 5)
        let third = Self.reserve(&bucket, now: 10.5, start: 10.5, within: 5)
        #expect(first == 2000 && second == 2000 && third == 2510)
    }
}

@Suite struct RouteThrottleTests {
    @Test func anIdleRouteIsOpenAndAPauseOnlyGrows() {
        let throttle = RouteThrottle()
        #expect(throttle.isOpen(at: 5) && throttle.pause(at: 5) == 0)
        let first = throttle.pause(until: 10), earlier = throttle.pause(until: 8)
        #expect(first && !earlier)
        #expect(!throttle.isOpen(at: 5) && throttle.pause(at: 5) == 5 && throttle.isOpen(at: 11))
        let longer = throttle.pause(until: 12)
        #expect(longer && throttle.pause(at: 11) == 1)
    }

    @Test func aPauseHoldsRequestsAndOneTooLongIsRefusedAtOnce() {
        let throttle = RouteThrottle()
        throttle.pause(until: 3)
        let (grant, holder) = throttle.admit(now: 1, within: 5)
        #expect(grant == .after(2) && holder == .upstream)
        let (refused, why) = throttle.admit(now: 1, within: 1)
        #expect(refused == .refused(2) && why == .upstream)
        let (free, none) = throttle.admit(now: 4, within: 1)
        #expect(free == .after(0) && none == nil)
    }

    /// A retry asks not before its backoff's end: the bucket holds it past that only when
    /// its next token comes later, and then the bucket is what held it.
    @Test func aRetryAsksFromTheEndOfItsBackoff() {
        let free = RouteThrottle()
        #expect(free.admit(now: 0, within: 5, notBefore: 0.3) == (.after(0.3), nil))
        let throttle = RouteThrottle(rate: (count: 1, period: 1))
        #expect(throttle.admit(now: 0, within: 5) == (.after(0), nil))
        #expect(throttle.admit(now: 0, within: 5, notBefore: 2) == (.after(2), nil))
        #expect(throttle.admit(now: 0, within: 5, notBefore: 2.5) == (.after(3.01), .bucket))
        #expect(throttle.admit(now: 0, within: 1, notBefore: 0.5).grant == .refused(4.02))
    }

    @Test func theBucketAndThePauseTogether() {
        let throttle = RouteThrottle(rate: (count: 1, period: 1))
        #expect(!throttle.isOpen(at: 0))
        #expect(throttle.admit(now: 0, within: 5) == (.after(0), nil))
        #expect(throttle.admit(now: 0, within: 5) == (.after(1.01), .bucket))
        // The upstream pauses the route past the bucket's next token: the pause holds it.
        throttle.pause(until: 4)
        #expect(throttle.admit(now: 0.5, within: 5) == (.after(3.5), .upstream))
        // A reload without `rate` drops the bucket; with the same rate it is kept (its one
        // token spoken for at 4 comes back a period on).
        throttle.update(rate: (count: 1, period: 1))
        guard case .refused(let needed) = throttle.admit(now: 4, within: 0.5).grant else { Issue.record("granted"); return }
        #expect(abs(needed - 1.01) < 1e-9)
        throttle.update(rate: nil)
        #expect(throttle.admit(now: 4, within: 0) == (.after(0), nil) && throttle.isOpen(at: 4))
    }
}
