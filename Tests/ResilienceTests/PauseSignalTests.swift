import HTTPCore
import Resilience
import Testing

@Suite struct PauseSignalTests {
    static let now = 1_800_000_000.0

    static func pause(_ status: Int, _ fields: [(String, String)]) -> PauseSignal.Source? {
        PauseSignal.pause(status: status, headers: HeaderFields(fields), wallNow: now)?.source
    }

    static func seconds(_ status: Int, _ fields: [(String, String)]) -> Double? {
        PauseSignal.pause(status: status, headers: HeaderFields(fields), wallNow: now)?.seconds
    }

    @Test func retryAfterInSecondsOrAsADateOn429And503() {
        #expect(Self.seconds(429, [("Retry-After", "1")]) == 1)
        #expect(Self.seconds(503, [("retry-after", " 120 ")]) == 120)
        #expect(Self.seconds(429, [("Retry-After", HTTPDate.format(unixSeconds: Self.now + 30))]) == 30)
        #expect(Self.pause(429, [("Retry-After", "1")]) == .retryAfter)
        // Only on 429 and 503; a date gone by, zero, junk and a negative number ask for nothing.
        #expect(Self.seconds(200, [("Retry-After", "5")]) == nil)
        #expect(Self.seconds(500, [("Retry-After", "5")]) == nil)
        #expect(Self.seconds(429, [("Retry-After", HTTPDate.format(unixSeconds: Self.now - 30))]) == nil)
        for junk in ["0", "", "soon", "-5", "1.5", "5 5"] { #expect(Self.seconds(429, [("Retry-After", junk)]) == nil, "\(junk)") }
        // However long it asks, the pause is at most an hour.
        #expect(Self.seconds(429, [("Retry-After", "99999999999999999999999")]) == PauseSignal.maxSeconds)
    }

    @Test func rateLimitPoliciesAtZeroPauseForTheirReset() {
        #expect(Self.seconds(200, [("RateLimit", #""default";r=0;t=7"#)]) == 7)
        #expect(Self.pause(200, [("RateLimit", #""default";r=0;t=7"#)]) == .rateLimit)
        // Any policy at zero; the longest reset of those; a quoted name with a comma and
        // a semicolon in it; two field lines.
        #expect(Self.seconds(200, [("RateLimit", #"day;r=100;t=3600, "a,b;c";r=0;t=20, minute;t=50;r=0"#)]) == 50)
        #expect(Self.seconds(200, [("RateLimit", "a;r=5;t=9"), ("RateLimit", "b;r=0;t=4")]) == 4)
        // Remaining above zero, no reset, a reset that is not an integer: no pause.
        for field in ["a;r=1;t=5", "a;r=0", "a;r=0;t=x", "a;r=0;t=-3", "a;r=0;t=2.5", #"a;r=0;t="5""#, "a;r=00;t=", ";;;,,,", #""unterminated;r=0;t=5"#] {
            #expect(Self.seconds(200, [("RateLimit", field)]) == nil, "\(field)")
        }
        // A bad member is skipped; the next one still counts.
        #expect(Self.seconds(200, [("RateLimit", #"a;r=0;t=x"y,z", b;r=0;t=3"#)]) == 3)
    }

    @Test func xRateLimitRemainingZeroPausesUntilItsReset() {
        #expect(Self.seconds(200, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "12")]) == 12)
        #expect(Self.seconds(200, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(Int(Self.now) + 40))]) == 40)
        #expect(Self.pause(200, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "12")]) == .xRateLimit)
        #expect(Self.seconds(200, [("X-RateLimit-Remaining", "3"), ("X-RateLimit-Reset", "12")]) == nil)
        #expect(Self.seconds(200, [("X-RateLimit-Remaining", "0")]) == nil)
        #expect(Self.seconds(200, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(Int(Self.now) - 40))]) == nil)
    }

    @Test func theLongestPauseWins() {
        let fields = [("Retry-After", "5"), ("RateLimit", "a;r=0;t=9"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "2")]
        #expect(Self.seconds(429, fields) == 9 && Self.pause(429, fields) == .rateLimit)
        #expect(Self.seconds(429, []) == nil)
    }
}
