@testable import EventLoop
import HTTPCore
import Testing

/// The connection's lifecycle without a socket: bytes and events in, steps out, with
/// the clock in the test's hand.
@Suite struct ConnectionMachineTests {
    final class TestClock {
        var now = 1_000.0
    }

    static let limits = RequestParser.Limits(maxHeadBytes: 8 << 10, maxBodyBytes: 1 << 20)
    static let idle = 5.0
    static let get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"

    let clock = TestClock()

    func fresh(limits: RequestParser.Limits = limits) -> ConnectionMachine {
        let clock = self.clock
        return ConnectionMachine(limits: limits, clock: { clock.now })
    }

    @discardableResult
    func feed(_ m: inout ConnectionMachine, _ text: String) -> ConnectionMachine.Received {
        feed(&m, Array(text.utf8))
    }

    @discardableResult
    func feed(_ m: inout ConnectionMachine, _ bytes: [UInt8]) -> ConnectionMachine.Received {
        bytes.withUnsafeBytes { m.received($0, maxHeaderBytes: Self.limits.maxHeadBytes) }
    }

    func next(_ m: inout ConnectionMachine, overloaded: Bool = false) -> ConnectionMachine.Input {
        m.nextInput(idleTimeout: Self.idle, overloaded: overloaded)
    }

    func dispatched(_ input: ConnectionMachine.Input) -> ConnectionMachine.Incoming? {
        if case .dispatch(let incoming) = input { return incoming }
        return nil
    }

    func refused(_ input: ConnectionMachine.Input) -> ConnectionMachine.Incoming? {
        if case .refuse(let incoming) = input { return incoming }
        return nil
    }

    func needsMore(_ input: ConnectionMachine.Input) -> Double?? {
        if case .needMore(let arm) = input { return .some(arm) }
        return nil
    }

    func isBusy(_ input: ConnectionMachine.Input) -> Bool {
        if case .busy = input { return true }
        return false
    }

    func isContinue(_ input: ConnectionMachine.Input) -> Bool {
        if case .sendContinue = input { return true }
        return false
    }

    func drained(_ m: inout ConnectionMachine, limits: RequestParser.Limits = limits) -> ConnectionMachine.Drained {
        m.drained(idleTimeout: Self.idle, limits: limits)
    }

    /// A machine with one GET in hand.
    func handling(_ request: String = get) -> ConnectionMachine {
        var m = fresh()
        feed(&m, request)
        _ = next(&m)
        return m
    }

    static let keep = ConnectionMachine.Exchange(ending: .keepAlive, readPaused: false)

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

    // MARK: replies and how the connection ends

    @Test func aKeepAliveReplyLeavesTheConnectionOpen() {
        var m = handling()
        #expect(m.replying(keepAliveAsked: true, closeRequested: false, stopping: false) == false)
        #expect(m.state == .writing(Self.keep))
        clock.now = 1_010
        #expect(drained(&m) == .nextRequest(arm: Self.idle, resumeReading: false, parsePending: false))
        #expect(m.state == .idle)
        #expect(m.waitingSince == 1_010)
    }

    @Test func aClientThatDidNotAskToKeepItGetsAClose() {
        var m = handling("GET / HTTP/1.0\r\n\r\n")
        #expect(m.replying(keepAliveAsked: false, closeRequested: false, stopping: false) == true)
        #expect(drained(&m) == .linger(arm: ConnectionMachine.lingerSeconds, resumeReading: false))
        #expect(m.state == .lingering(dropped: 0))
    }

    @Test func theRepliesOwnConnectionCloseEndsIt() {
        var m = handling()
        #expect(m.replying(keepAliveAsked: true, closeRequested: true, stopping: false) == true)
    }

    @Test func aStoppingServerClosesAfterTheReply() {
        var m = handling()
        #expect(!m.closesOnShutdown)
        #expect(m.replying(keepAliveAsked: true, closeRequested: false, stopping: true) == true)
    }

    @Test func anIdleConnectionClosesOnShutdownAndOthersDoNot() {
        let idle = fresh()
        #expect(idle.closesOnShutdown)
        var reading = fresh()
        feed(&reading, "GE")
        _ = next(&reading)
        #expect(!reading.closesOnShutdown)
    }

    @Test func aReplyWaitingForTheClientRestartsTheDeadline() {
        var m = handling()
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        clock.now = 1_020
        #expect(m.awaitingDrain(idleTimeout: 7) == 7)
        #expect(m.waitingSince == nil)
        #expect(m.deadlinePassed())
    }

    // MARK: the client's FIN

    @Test func finBetweenRequestsCloses() {
        var m = fresh()
        #expect(m.endOfInput() == .close)
    }

    @Test func finInsideARequestCloses() {
        var m = fresh()
        feed(&m, "GET /a")
        _ = next(&m)
        #expect(m.endOfInput() == .close)
    }

    @Test func finAfterARequestStillGetsItsReplyThenCloses() {
        var m = handling()
        #expect(m.endOfInput() == .pauseReading)
        #expect(m.peerFinished)
        #expect(m.replying(keepAliveAsked: true, closeRequested: false, stopping: false) == true)
        #expect(m.peerFinished)
        #expect(drained(&m) == .shutdownAndClose)
    }

    @Test func finWhileReadingIsPausedAsksNothingMore() {
        var m = handling()
        let big = [UInt8](repeating: 0x41, count: Self.limits.maxHeadBytes + ConnectionMachine.readAhead + 1)
        feed(&m, big)
        #expect(m.endOfInput() == .none)
        #expect(m.peerFinished)
    }

    @Test func finWhileTheReplyIsLeavingClosesAfterIt() {
        var m = handling()
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        #expect(m.endOfInput() == .pauseReading)
        #expect(m.state == .writing(.init(ending: .peerFinished, readPaused: true)))
        #expect(drained(&m) == .shutdownAndClose)
    }

    @Test func finDuringAStreamCloses() {
        var m = handling()
        m.streamStarted()
        #expect(m.endOfInput() == .close)
    }

    @Test func finWhileLingeringCloses() {
        var m = handling()
        _ = m.replying(keepAliveAsked: false, closeRequested: false, stopping: false)
        _ = drained(&m)
        #expect(m.endOfInput() == .close)
    }

    // MARK: deadlines

    @Test func everyDeadlineByState() {
        var m = fresh()
        #expect(m.deadlinePassed(), "idle")
        feed(&m, "GE")
        _ = next(&m)
        #expect(m.deadlinePassed(), "reading")
        feed(&m, "T / HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = next(&m)
        #expect(!m.deadlinePassed(), "handling")
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        #expect(m.deadlinePassed(), "writing")
        _ = drained(&m)
        #expect(m.deadlinePassed(), "idle again")
    }

    @Test func aStreamHasNoDeadline() {
        var m = handling()
        m.streamStarted()
        #expect(!m.deadlinePassed())
        #expect(m.waitingSince == nil)
    }

    @Test func aLingeringCloseHasItsOwnDeadline() {
        var m = handling()
        _ = m.replying(keepAliveAsked: false, closeRequested: false, stopping: false)
        clock.now = 1_030
        #expect(drained(&m) == .linger(arm: ConnectionMachine.lingerSeconds, resumeReading: false))
        #expect(m.waitingSince == 1_030)
        #expect(m.deadlinePassed())
        #expect(m.hasReplyLeaving)
    }

    @Test func aClosedConnectionIgnoresItsDeadline() {
        var m = fresh()
        m.close()
        #expect(!m.deadlinePassed())
    }

    // MARK: lingering

    @Test func lingeringDropsInputUntilItsBound() {
        var m = handling(Self.get + "GET /b HTTP/1.1\r\n\r\n")
        _ = m.replying(keepAliveAsked: false, closeRequested: false, stopping: false)
        _ = drained(&m)
        #expect(m.unparsedBytes == 0)
        #expect(feed(&m, [UInt8](repeating: 1, count: 1000)) == .keep)
        #expect(m.state == .lingering(dropped: 1000))
        #expect(m.unparsedBytes == 0)
        #expect(isBusy(next(&m)))
    }

    @Test func lingeringBeyondItsByteBoundCloses() {
        var m = handling()
        _ = m.replying(keepAliveAsked: false, closeRequested: false, stopping: false)
        _ = drained(&m)
        let chunk = [UInt8](repeating: 1, count: 16 << 20)
        for _ in 0..<4 { #expect(feed(&m, chunk) == .keep) }
        #expect(feed(&m, [1]) == .close)
    }

    // MARK: streams

    @Test func aStreamReportsEachDrainAndEndsWithALinger() {
        var m = handling()
        m.streamStarted()
        #expect(m.state == .streaming(readPaused: false))
        #expect(drained(&m) == .streamDrained)
        let ended = m.streamEnding()
        #expect(ended)
        #expect(m.state == .writing(.init(ending: .close, readPaused: false)))
        #expect(drained(&m) == .linger(arm: ConnectionMachine.lingerSeconds, resumeReading: false))
    }

    @Test func endingAStreamThatIsNotOpenDoesNothing() {
        var m = handling()
        let ended = m.streamEnding()
        #expect(!ended)
        #expect(m.state == .handling(Self.keep))
    }

    @Test func aStreamPausedForItsBacklogResumesReadingToLinger() {
        var m = handling()
        m.streamStarted()
        feed(&m, [UInt8](repeating: 0x41, count: Self.limits.maxHeadBytes + ConnectionMachine.readAhead + 1))
        let ended = m.streamEnding()
        #expect(ended)
        #expect(drained(&m) == .linger(arm: ConnectionMachine.lingerSeconds, resumeReading: true))
    }

    // MARK: closing

    @Test func closeReportsTheStateItEndedAndForgetsInput() {
        var m = handling()
        m.streamStarted()
        feed(&m, Self.get)
        #expect(m.close() == .streaming(readPaused: false))
        #expect(m.state == .closed)
        #expect(!m.isOpen)
        #expect(m.unparsedBytes == 0)
        #expect(m.close() == .closed)
    }

    @Test func aClientThatVanishesMidReplyLeavesAWritingState() {
        var m = handling()
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        _ = m.awaitingDrain(idleTimeout: Self.idle)
        #expect(m.close() == .writing(Self.keep))
        #expect(drained(&m) == .none)
    }

    @Test func aClosedConnectionTakesNoInput() {
        var m = fresh()
        m.close()
        #expect(feed(&m, Self.get) == .keep)
        #expect(isBusy(next(&m)))
        #expect(m.endOfInput() == .none)
        #expect(m.unparsedBytes == 0)
        #expect(m.waitingSince == nil)
    }

    // MARK: illegal transitions trap in debug builds, naming the state

    #if DEBUG
    @Test func aReplyWithNoRequestInHandTraps() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var m = ConnectionMachine(limits: .init(maxHeadBytes: 1024, maxBodyBytes: 1024), clock: { 0 })
            _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        }
        #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("connection: a reply in state idle"))
    }

    @Test func aStreamWithNoRequestInHandTraps() async {
        await #expect(processExitsWith: .failure) {
            var m = ConnectionMachine(limits: .init(maxHeadBytes: 1024, maxBodyBytes: 1024), clock: { 0 })
            m.streamStarted()
        }
    }
    #endif

    @Test func drainingWithNothingSentDoesNothing() {
        var m = fresh()
        #expect(drained(&m) == .none)
        #expect(m.state == .idle)
    }

    @Test func aPartialRequestSurvivesBetweenReads() {
        var m = fresh()
        for byte in Self.get.utf8.dropLast() {
            feed(&m, [byte])
            #expect(needsMore(next(&m)) != nil)
        }
        feed(&m, "\n")
        #expect(dispatched(next(&m))?.head?.target == "/a")
    }

    @Test func consumedInputIsReclaimedBeforeNewBytes() {
        var m = fresh()
        feed(&m, Self.get)
        _ = next(&m)
        _ = m.replying(keepAliveAsked: true, closeRequested: false, stopping: false)
        _ = drained(&m)
        feed(&m, "GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(m.pendingStart == 0)
        #expect(dispatched(next(&m))?.head?.target == "/c")
    }
}
