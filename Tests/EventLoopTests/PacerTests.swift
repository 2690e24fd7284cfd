@testable import EventLoop
import HTTPCore
internal import CLibevent
import Testing

/// The pacer's arithmetic: what may leave when, for a held and a paced reply.
@Suite struct PacerTests {
    static let noop: event_callback_fn = { _, _, _ in }
    /// Outlives every pacer of a test: their timers belong to its base.
    let loop: EventLoop

    init() throws { loop = try EventLoop() }

    func pacer(_ shaping: ReplyShaping, budget: ProcessBudget) throws -> Pacer {
        try #require(Pacer(base: loop.base, owner: UnsafeMutableRawPointer(bitPattern: 1)!, callback: Self.noop,
                                  shaping: shaping, now: 100, budget: budget))
    }

    @Test func aRateLetsOutAStepAtATime() throws {
        let budget = ProcessBudget(maxConnections: 1, maxBufferedBytes: 1)
        let p = try pacer(ReplyShaping(delay: 0.5, bytesPerSecond: 10_000), budget: budget)
        #expect(budget.shapedReplies == 1)
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

    @Test func extremesStayBounded() throws {
        let budget = ProcessBudget(maxConnections: 1, maxBufferedBytes: 1)
        let slowest = try pacer(ReplyShaping(bytesPerSecond: 0), budget: budget)
        #expect(slowest.rate == 1 && slowest.chunk == 1 && slowest.allowance(now: 100) == 1)
        let fastest = try pacer(ReplyShaping(bytesPerSecond: Int.max), budget: budget)
        #expect(fastest.chunk == 256 << 10 && fastest.allowance(now: 1e12) > 0)
        let unpaced = try pacer(ReplyShaping(delay: -3), budget: budget)
        #expect(unpaced.start == 100 && unpaced.allowance(now: 100) == Int.max && unpaced.wait(now: 100) == 0)
    }

    @Test func theBudgetCountsPacersWhileTheyLive() throws {
        let budget = ProcessBudget(maxConnections: 1, maxBufferedBytes: 1)
        do {
            let p = try pacer(ReplyShaping(delay: 1), budget: budget)
            #expect(budget.shapedReplies == 1 && p.ending == .whole)
        }
        #expect(budget.shapedReplies == 0)
    }
}
