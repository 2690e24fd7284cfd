import Resilience
import Testing

@Suite struct BackoffTests {
    @Test func fullJitterDoublesUpToTheCap() {
        #expect(Backoff.delay(retry: 1, base: 0.1, cap: 2, random: 0.5) == 0.05)
        #expect(Backoff.delay(retry: 3, base: 0.1, cap: 2, random: 0.5) == 0.2)
        #expect(Backoff.delay(retry: 10, base: 0.1, cap: 2, random: 0.5) == 1)
        #expect(Backoff.delay(retry: 200, base: 0.1, cap: 2, random: 0.999) < 2)
        #expect(Backoff.delay(retry: 2, base: 0.1, cap: 2, random: 0) == 0)
    }

    @Test func retryAfterIsWaitedWhenLonger() {
        #expect(Backoff.delay(retry: 1, base: 0.1, cap: 2, random: 0.5, retryAfter: 1) == 1)
        #expect(Backoff.delay(retry: 10, base: 1, cap: 8, random: 0.5, retryAfter: 1) == 4)
    }
}
