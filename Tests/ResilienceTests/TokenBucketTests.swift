import Resilience
import Testing

@Suite struct TokenBucketTests {
    /// The wait `reserve` gives, in whole milliseconds (nil when refused).
    static func reserve(_ bucket: inout TokenBucket, now: Double, within limit: Double) -> Int? {
        bucket.reserve(now: now, within: limit).map { Int(($0 * 1000).rounded()) }
    }

    @Test func aFullBucketServesAPeriodsWorthThenOneTokenPerInterval() {
        var bucket = TokenBucket(count: 10, period: 1, now: 100)
        let burst = (0..<10).map { _ in Self.reserve(&bucket, now: 100, within: 0) }
        #expect(burst == Array(repeating: 0, count: 10))
        // Empty: the next token comes 0.1 s later; a request that cannot wait is refused
        // and takes nothing.
        let impatient = Self.reserve(&bucket, now: 100, within: 0.05)
        let patient = Self.reserve(&bucket, now: 100, within: 5)
        // Reserved ahead, in order: the one after waits for the token after.
        let next = Self.reserve(&bucket, now: 100, within: 5)
        let stillOwed = Self.reserve(&bucket, now: 100.2, within: 0)
        let free = Self.reserve(&bucket, now: 100.3, within: 0)
        #expect(impatient == nil && patient == 100 && next == 200 && stillOwed == nil && free == 0)
    }

    @Test func theRateHoldsOverTenSecondsOfDemand() {
        // Offered 100 a second for 10 s, each willing to wait 1 s: granted in the order
        // asked, a second's burst at first, then 10 a second.
        var bucket = TokenBucket(count: 10, period: 1, now: 0)
        var granted: [Double] = []
        for k in 0..<1_000 {
            let now = Double(k) / 100
            if let wait = bucket.reserve(now: now, within: 1) { granted.append(now + wait) }
        }
        #expect(granted == granted.sorted())
        let busiest = stride(from: 0.0, to: 11, by: 0.05).map { start in granted.filter { $0 >= start && $0 < start + 1 }.count }
        #expect(busiest.max() == 19)   // the burst of 10, then one each 0.1 s
        #expect(busiest.dropFirst(20).allSatisfy { $0 <= 11 }, "\(busiest)")
        // The burst, 10 a second for 10 s, and the 9 still waiting when demand ends.
        #expect(granted.count >= 118 && granted.count <= 120, "\(granted.count)")
    }

    @Test func aMinuteRateHoldsAMinutesWorth() {
        var bucket = TokenBucket(count: 60, period: 60, now: 0)
        #expect(bucket.capacity == 60)
        let burst = (0..<60).map { _ in Self.reserve(&bucket, now: 0, within: 0) }
        let refused = Self.reserve(&bucket, now: 0, within: 0.5)
        let aSecondOn = Self.reserve(&bucket, now: 1, within: 0)
        #expect(burst == Array(repeating: 0, count: 60) && refused == nil && aSecondOn == 0)
        // Idle for an hour, it holds no more than a minute's worth.
        let later = (0..<61).map { _ in Self.reserve(&bucket, now: 3_600, within: 0) }
        #expect(later == Array(repeating: 0, count: 60) + [nil])
    }

    @Test func aPauseOnlyGrows() {
        var pause = UpstreamPause()
        #expect(pause.remaining(now: 5) == 0)
        let first = pause.pause(until: 10), earlier = pause.pause(until: 8)
        #expect(first && !earlier)
        #expect(pause.remaining(now: 5) == 5 && pause.remaining(now: 11) == 0)
        let longer = pause.pause(until: 12)
        #expect(longer && pause.until == 12)
    }
}
