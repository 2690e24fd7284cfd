import Resilience
import Testing

@Suite struct RetryBudgetTests {
    static func spend(_ budget: inout RetryBudget, _ times: Int, now: Double) -> Int {
        var spent = 0
        for _ in 0..<times where budget.spend(now: now) { spent += 1 }
        return spent
    }

    @Test func retriesStayWithinTheShareOfRequests() {
        var budget = RetryBudget(percent: 20, floorPerSecond: 0)
        for _ in 0..<100 { budget.request(now: 0.5) }
        let first = Self.spend(&budget, 50, now: 0.6)
        // More requests make room for more retries.
        for _ in 0..<10 { budget.request(now: 1.5) }
        let more = Self.spend(&budget, 5, now: 1.6)
        #expect(first == 20 && more == 2)
    }

    @Test func aQuietRouteStillRetriesUpToTheFloorEachSecond() {
        var budget = RetryBudget(percent: 20)
        budget.request(now: 0)
        let inSecondZero = Self.spend(&budget, 2, now: 0) + Self.spend(&budget, 5, now: 0.9)
        let inSecondOne = Self.spend(&budget, 5, now: 1.0)
        #expect(inSecondZero == 3 && inSecondOne == 3)
    }

    @Test func theWindowForgetsOldSeconds() {
        var budget = RetryBudget(percent: 50, floorPerSecond: 0)
        for _ in 0..<10 { budget.request(now: 0) }
        let spent = Self.spend(&budget, 9, now: 0)
        let stillFull = Self.spend(&budget, 1, now: 9.9)
        // Ten seconds on, the requests and retries of second 0 are gone.
        let forgotten = Self.spend(&budget, 1, now: 10)
        for _ in 0..<2 { budget.request(now: 10) }
        let fresh = Self.spend(&budget, 3, now: 10)
        // A long silence empties everything.
        let afterSilence = Self.spend(&budget, 1, now: 1_000)
        #expect(spent == 5 && stillFull == 0 && forgotten == 0 && fresh == 1 && afterSilence == 0)
    }

    @Test func underAWhollyFailingUpstreamExtraLoadStaysWithinTheBudget() {
        // Every first attempt fails and wants one retry: 10 s of 100 requests a second.
        var budget = RetryBudget(percent: 25)
        var requests = 0, retries = 0
        for k in 0..<1_000 {
            let now = Double(k) / 100
            budget.request(now: now)
            requests += 1
            if budget.spend(now: now) { retries += 1 }
        }
        #expect(Double(retries) <= 0.25 * Double(requests) + 3, "\(retries) of \(requests)")
        #expect(retries >= 240, "\(retries)")
    }
}
