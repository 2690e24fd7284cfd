@testable import EventLoop
import HTTPCore
internal import CLibevent
import Testing

/// The pace's arithmetic on plain times (what may leave when, for a held and a paced
/// reply, and when a body read at once is due), and the timer's share of the budget.
@Suite struct PaceTests {
    @Test func aRateLetsOutAStepAtATime() {
        var p = Pace(ReplyShaping(delay: 0.5, bytesPerSecond: 10_000), now: 100)
        // Held for its delay: nothing before 100.5.
        #expect(p.allowance(now: 100.4) == 0 && abs(p.wait(now: 100.4) - 0.1) < 1e-9)
        // Then one step (1/50 of the rate) at once, and the rate after it.
        #expect(p.chunk == 200 && p.allowance(now: 100.5) == 200)
        #expect(p.allowance(now: 101.5) == 10_200)
        p.sent = 10_200
        #expect(p.allowance(now: 101.5) == 0)
        #expect(abs(p.wait(now: 101.5) - 0.02) < 1e-9)
        #expect(p.giveUpAt == 100.5 + ReplyShaping.maxSeconds)
    }

    @Test func extremesStayBounded() {
        let slowest = Pace(ReplyShaping(bytesPerSecond: 0), now: 100)
        #expect(slowest.rate == 1 && slowest.chunk == 1 && slowest.allowance(now: 100) == 1)
        let fastest = Pace(ReplyShaping(bytesPerSecond: Int.max), now: 100)
        #expect(fastest.chunk == 256 << 10 && fastest.allowance(now: 1e12) > 0)
        let unpaced = Pace(ReplyShaping(delay: -3), now: 100)
        #expect(unpaced.start == 100 && unpaced.allowance(now: 100) == Int.max && unpaced.wait(now: 100) == 0)
    }

    @Test func aBodyReadAtOnceIsDueWhenItWouldHaveArrived() {
        let p = Pace(ReplyShaping(bytesPerSecond: 1_000), now: 50)
        #expect(p.due(bytes: 2_500, now: 50) == 2.5)
        #expect(p.due(bytes: 2_500, now: 51) == 1.5)
        #expect(p.due(bytes: 2_500, now: 60) == 0)
    }

    @Test func theMachineLetsGoOfItsShapingWhenItCloses() {
        var machine = ConnectionMachine(limits: RequestParser.Limits(maxHeadBytes: 8 << 10, maxBodyBytes: 1 << 20), clock: { 0 })
        machine.shaping.reply = Pace(ReplyShaping(delay: 1), now: 0)
        machine.shaping.upload = Pace(ReplyShaping(bytesPerSecond: 10), now: 0)
        machine.shaping.held = ConnectionMachine.Incoming(head: nil, failure: nil, body: [1])
        machine.close()
        #expect(machine.shaping.reply == nil && machine.shaping.upload == nil && machine.shaping.held == nil)
    }

    @Test func theBudgetCountsTimersWhileTheyLive() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let noop: event_callback_fn = { _, _, _ in }
        let budget = ProcessBudget(maxConnections: 1, maxBufferedBytes: 1)
        do {
            let timer = try #require(PaceTimer(base: loop.base, owner: UnsafeMutableRawPointer(bitPattern: 1)!, callback: noop, budget: budget))
            #expect(budget.shapedReplies == 1 && timer.wake(after: 60))
        }
        #expect(budget.shapedReplies == 0)
    }
}
