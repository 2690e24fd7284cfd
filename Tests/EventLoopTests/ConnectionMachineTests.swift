@testable import EventLoop
import HTTPCore
import Testing

/// The connection's lifecycle without a socket, as requests arrive: reading, pipelining,
/// `Expect: 100-continue`, refusals.
@Suite struct ConnectionMachineTests: MachineDriving {
    let clock = MachineClock()

    // MARK: reading a request

    @Test func aNewConnectionIsIdleAndWaitingSinceItsStart() {
        let m = fresh()
        #expect(m.state == .idle)
        #expect(m.waitingSince == 1_000)
        #expect(m.isOpen)
        #expect(!m.hasReplyLeaving)
    }

    @Test func aWholeRequestInOneReadIsDispatchedWithoutADeadline() {
        var m = fresh()
        #expect(feed(&m, Self.get) == .parse)
        let incoming = dispatched(next(&m))
        #expect(incoming?.head?.target == "/a")
        #expect(incoming?.failure == nil)
        #expect(m.state == .handling(Self.keep))
        #expect(m.waitingSince == nil)
        #expect(m.hasReplyLeaving)
    }

    @Test func theFirstBytesOfARequestStartItsDeadline() {
        var m = fresh()
        clock.now = 1_003
        feed(&m, "GET /a HT")
        #expect(needsMore(next(&m)) == .some(Self.idle))
        #expect(m.state == .reading)
        #expect(m.waitingSince == 1_003)
    }

    @Test func laterPiecesOfTheSameRequestDoNotRestartIt() {
        var m = fresh()
        feed(&m, "GET /a HT")
        _ = next(&m)
        clock.now = 1_004
        feed(&m, "TP/1.1\r\nHo")
        #expect(needsMore(next(&m)) == .some(nil))
        #expect(m.waitingSince == 1_000)
        feed(&m, "st: x\r\n\r\n")
        #expect(dispatched(next(&m))?.head?.target == "/a")
    }

    @Test func aContentLengthBodyArrivesWithItsRequest() {
        var m = fresh()
        feed(&m, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel")
        #expect(needsMore(next(&m)) != nil)
        feed(&m, "lo")
        let incoming = dispatched(next(&m))
        #expect(incoming.map { String(decoding: $0.body, as: UTF8.self) } == "hello")
    }

    @Test func aChunkedBodyIsJoined() {
        var m = fresh()
        feed(&m, "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        let incoming = dispatched(next(&m))
        #expect(incoming.map { String(decoding: $0.body, as: UTF8.self) } == "abcde")
    }

    @Test func nothingIsParsedWhileARequestIsInHand() {
        var m = handling()
        #expect(feed(&m, Self.get) == .keep)
        #expect(isBusy(next(&m)))
        #expect(m.unparsedBytes == Self.get.utf8.count)
    }

    // MARK: pipelining

    @Test func pipelinedRequestsAreTakenOneAtATime() {
        var m = fresh()
        feed(&m, Self.get + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(dispatched(next(&m))?.head?.target == "/a")
        #expect(isBusy(next(&m)))
        #expect(m.replying(keepAliveAsked: true, closeRequested: false, stopping: false) == false)
        #expect(drained(&m) == .nextRequest(arm: Self.idle, resumeReading: false, parsePending: true))
        #expect(dispatched(next(&m))?.head?.target == "/b")
    }

    @Test func theLastPipelinedRequestLeavesNothingPending() {
        var m = fresh()
        feed(&m, Self.get)
        _ = next(&m)
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        #expect(drained(&m) == .nextRequest(arm: Self.idle, resumeReading: false, parsePending: false))
        #expect(needsMore(next(&m)) == .some(nil))
        #expect(m.state == .idle)
    }

    @Test func aLongBacklogPausesReadingOnceAndTheNextRequestResumesIt() {
        var m = handling()
        let big = [UInt8](repeating: 0x41, count: Self.limits.maxHeadBytes + ConnectionMachine.readAhead)
        #expect(feed(&m, big) == .keep)
        #expect(feed(&m, "x") == .pauseReading)
        #expect(m.state == .handling(.init(ending: .keepAlive, readPaused: true)))
        #expect(feed(&m, "y") == .keep)
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        #expect(drained(&m) == .nextRequest(arm: Self.idle, resumeReading: true, parsePending: true))
    }

    @Test func aBacklogWhileWritingPausesReadingToo() {
        var m = handling()
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        let big = [UInt8](repeating: 0x41, count: Self.limits.maxHeadBytes + ConnectionMachine.readAhead + 1)
        #expect(feed(&m, big) == .pauseReading)
        #expect(m.state == .writing(.init(ending: .keepAlive, readPaused: true)))
    }

    @Test func aBacklogDuringAStreamPausesReading() {
        var m = handling()
        m.streamStarted()
        let big = [UInt8](repeating: 0x41, count: Self.limits.maxHeadBytes + ConnectionMachine.readAhead + 1)
        #expect(feed(&m, big) == .pauseReading)
        #expect(m.state == .streaming(readPaused: true))
        #expect(feed(&m, "z") == .keep)
    }

    @Test func newLimitsApplyFromTheNextRequest() {
        var m = handling()
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        let tight = RequestParser.Limits(maxHeadBytes: 8 << 10, maxBodyBytes: 3)
        _ = drained(&m, limits: tight)
        feed(&m, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(refused(next(&m))?.failure == .bodyTooLarge(limit: 3))
    }

    // MARK: Expect: 100-continue

    static let expecting = "POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"

    @Test func expectContinueIsAnsweredBeforeTheBody() {
        var m = fresh()
        feed(&m, Self.expecting)
        #expect(isContinue(next(&m)))
        #expect(needsMore(next(&m)) == .some(Self.idle))
        feed(&m, "hello")
        #expect(dispatched(next(&m))?.body.count == 5)
    }

    @Test func noContinueWhenTheBodyIsAlreadyArriving() {
        var m = fresh()
        feed(&m, Self.expecting + "he")
        #expect(needsMore(next(&m)) != nil)
    }

    @Test func noContinueForHTTP10() {
        var m = fresh()
        feed(&m, "POST /p HTTP/1.0\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(needsMore(next(&m)) != nil)
    }

    @Test func noContinueWhenOverloaded() {
        var m = fresh()
        feed(&m, Self.expecting)
        #expect(needsMore(next(&m, overloaded: true)) != nil)
    }

    @Test func noContinueForABodyOverTheLimitWhichIsRefused() {
        var m = fresh(limits: .init(maxHeadBytes: 8 << 10, maxBodyBytes: 4))
        feed(&m, Self.expecting)
        let incoming = refused(next(&m))
        #expect(incoming?.failure == .bodyTooLarge(limit: 4))
        #expect(incoming?.head?.target == "/p")
    }

    @Test func noContinueWithoutABody() {
        var m = fresh()
        feed(&m, "GET /g HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n")
        #expect(dispatched(next(&m)) != nil)
    }

    // MARK: refusals

    @Test func anUnreadableRequestIsRefusedAndEndsTheConnection() {
        var m = fresh()
        feed(&m, "GET / HTTP/1.1\nHost: x\r\n\r\n" + Self.get)
        let incoming = refused(next(&m))
        #expect(incoming?.failure != nil)
        #expect(m.state == .handling(.init(ending: .close, readPaused: true)))
        #expect(m.unparsedBytes == 0)
        #expect(m.replying(keepAliveAsked: true, closeRequested: false, stopping: false) == true)
        #expect(drained(&m) == .linger(arm: ConnectionMachine.lingerSeconds, resumeReading: true))
    }

    @Test func aHeadOverTheLimitIsRefused() {
        var m = fresh(limits: .init(maxHeadBytes: 64, maxBodyBytes: 10))
        feed(&m, "GET /" + String(repeating: "a", count: 100))
        #expect(refused(next(&m))?.failure != nil)
    }
}
