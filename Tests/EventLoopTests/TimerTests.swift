@testable import EventLoop
import Testing

@Suite struct TimerTests {
    /// Teardown can record a reply after the flush timer was cancelled; scheduling it
    /// then must do nothing (it used to hand libevent a freed event).
    @Test func aCancelledTimerIgnoresSchedulingAndNeverFires() throws {
        let loop = try EventLoop()
        var fired = 0
        let cancelled = loop.makeTimer { fired += 1 }
        cancelled.cancel()
        cancelled.schedule(after: 0)
        let live = loop.makeTimer { fired += 10 }
        live.schedule(after: 0)
        loop.exit(after: 0.05)
        loop.run()
        #expect(fired == 10)
        live.cancel()
        loop.close()
    }
}
