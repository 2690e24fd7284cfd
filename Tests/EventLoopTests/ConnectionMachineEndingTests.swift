@testable import EventLoop
import HTTPCore
import Testing

/// The connection's lifecycle without a socket, as replies leave and connections end:
/// keep-alive or close, the client's FIN, every deadline, lingering, streams, closing,
/// and the transitions that must never happen.
@Suite struct ConnectionMachineEndingTests: MachineDriving {
    let clock = MachineClock()

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
