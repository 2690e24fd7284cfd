import HTTPCore

/// The lifecycle of one client connection as a value: events in (bytes read, end of
/// input, a reply queued, output drained, a deadline, shutdown), the next step out. No
/// sockets, no timers and no clock of its own — `Connection` performs the steps and
/// `clock` is injected — so every transition is tested without a socket.
///
/// One request at a time: pipelined input waits in `pending` until the reply before it
/// has left, and beyond `maxHeaderBytes + readAhead` reading pauses. Deadlines: an idle
/// keep-alive connection, a request from its first byte, a reply being drained and a
/// lingering close each get one; a request being handled and a stream have none (the
/// upstream timeout and the stream's own bounds govern).
struct ConnectionMachine {
    enum State: Equatable {
        /// Between requests (no byte of the next one yet).
        case idle
        /// Part of a request has arrived.
        case reading
        /// A complete request is with the handler.
        case handling(Exchange)
        /// A reply is queued and not yet drained.
        case writing(Exchange)
        /// A chunked stream is open.
        case streaming(readPaused: Bool)
        /// Our side is shut down after a final reply; input is read and dropped until the
        /// client closes, so unread bytes do not make the kernel reset the reply away.
        case lingering(dropped: Int)
        case closed
    }

    /// How the connection ends after the reply to the request in hand.
    enum Ending: Equatable {
        case keepAlive
        /// A final reply: the connection closes after it.
        case close
        /// The client sent FIN: it may still read its reply (half-close), then we close.
        case peerFinished
    }

    struct Exchange: Equatable {
        var ending: Ending
        /// Input is not read while the backlog is full or no more is wanted.
        var readPaused: Bool
    }

    /// Network shaping (DESIGN §3) on this connection: the pace of the reply being sent,
    /// the pace a request body is read at, and a request read whole held until its body
    /// would have arrived at that pace.
    struct Shaping {
        var reply: Pace?
        var upload: Pace?
        var held: Incoming?
    }

    /// A request read whole (or the reason it could not be), for the handler.
    struct Incoming {
        var head: RequestHead?
        var failure: HTTPParseError?
        var body: [UInt8]
    }

    /// What reading the pending input leads to.
    enum Input {
        /// More bytes are needed; `arm` is the deadline to start when a request has begun.
        case needMore(arm: Double?)
        /// The head asks for `100 Continue` before its body.
        case sendContinue
        /// A complete request for the handler.
        case dispatch(Incoming)
        /// The request cannot be read: the handler answers it and reading stops for good.
        case refuse(Incoming)
        /// A request is already in hand (or the connection is ending): nothing is parsed.
        case busy
    }

    enum Received: Equatable {
        /// Parse it (`nextInput`).
        case parse
        /// Kept for later, or dropped while lingering.
        case keep
        case pauseReading
        case close
    }

    enum EndOfInput: Equatable {
        case none
        case pauseReading
        case close
    }

    enum Drained: Equatable {
        case none
        /// A stream's writes so far have left.
        case streamDrained
        /// The reply is out and the connection stays: the next request may start.
        case nextRequest(arm: Double, resumeReading: Bool, parsePending: Bool)
        /// Shut our side down and `close` (the client already finished).
        case shutdownAndClose
        /// Shut our side down and drop input until the client closes or `arm` passes.
        case linger(arm: Double, resumeReading: Bool)
    }

    /// Bytes read beyond one head while a request is handled (pipelining).
    static let readAhead = 64 << 10
    /// Lingering after a final reply ends after this long or this many dropped bytes.
    static let lingerSeconds = 2.0
    static let lingerBytes = 64 << 20

    private(set) var state = State.idle
    /// When the current deadline was armed (for eviction: the oldest go first).
    private(set) var since: Double
    let clock: () -> Double
    private(set) var parser: RequestParser
    /// Unparsed input (pipelined or partial requests) from `pendingStart` on.
    private(set) var pending: [UInt8] = []
    private(set) var pendingStart = 0
    /// What shaping holds on this connection (the connection's timers wake it).
    var shaping = Shaping()
    /// The request being read.
    private var head: RequestHead?
    private var body: [UInt8] = []

    /// A fresh connection is idle with `idleTimeout` armed.
    init(limits: RequestParser.Limits, clock: @escaping () -> Double) {
        self.clock = clock
        parser = RequestParser(limits: limits)
        since = clock()
    }

    var isOpen: Bool { state != .closed }

    /// The head of a request whose body is still arriving.
    var headAwaitingBody: RequestHead? { state == .reading ? head : nil }

    /// Since when the connection has waited for its client (idle, a request arriving, a
    /// lingering close): those may be closed to make room. nil while we owe it a reply.
    var waitingSince: Double? {
        switch state {
        case .idle, .reading, .lingering: since
        default: nil
        }
    }

    /// A reply is being made or sent, or was just sent and waits for the client's FIN.
    var hasReplyLeaving: Bool {
        switch state {
        case .handling, .writing, .lingering: true
        default: false
        }
    }

    /// The client sent FIN while its request was in hand.
    var peerFinished: Bool {
        switch state {
        case .handling(let x), .writing(let x): x.ending == .peerFinished
        default: false
        }
    }

    var unparsedBytes: Int { pending.count - pendingStart }

    private mutating func arm(_ seconds: Double) -> Double {
        since = clock()
        return seconds
    }

    /// A transition the connection never asks for: a bug, named in debug builds.
    private func illegal(_ event: String) {
        assertionFailure("connection: \(event) in state \(state)")
    }

    // MARK: input

    mutating func received(_ bytes: UnsafeRawBufferPointer, maxHeaderBytes: Int) -> Received {
        switch state {
        case .closed:
            return .keep
        case .lingering(let dropped):
            let total = dropped + bytes.count
            if total > Self.lingerBytes { return .close }
            state = .lingering(dropped: total)
            return .keep
        default:
            break
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        pending.append(contentsOf: bytes)
        switch state {
        case .idle, .reading: return .parse
        case _ where unparsedBytes <= maxHeaderBytes + Self.readAhead: return .keep
        // Pipelined input beyond this waits in the kernel until the reply is out.
        case .handling(var x) where !x.readPaused:
            x.readPaused = true
            state = .handling(x)
        case .writing(var x) where !x.readPaused:
            x.readPaused = true
            state = .writing(x)
        case .streaming(false):
            state = .streaming(readPaused: true)
        default:
            return .keep
        }
        return .pauseReading
    }

    /// The client sent FIN. Before or inside a request there is nobody to answer; after
    /// a complete one it still gets its reply (half-close), then the connection ends.
    mutating func endOfInput() -> EndOfInput {
        switch state {
        case .idle, .reading, .lingering, .streaming:
            return .close
        case .handling(let x):
            state = .handling(Exchange(ending: .peerFinished, readPaused: true))
            return x.readPaused ? .none : .pauseReading
        case .writing(let x):
            state = .writing(Exchange(ending: .peerFinished, readPaused: true))
            return x.readPaused ? .none : .pauseReading
        case .closed:
            return .none
        }
    }

    /// Reads pending input until a request is complete, cannot be read, or more bytes
    /// are needed. `overloaded` withholds `100 Continue` (the body would be refused).
    mutating func nextInput(idleTimeout: Double, overloaded: Bool) -> Input {
        while true {
            switch state {
            case .idle, .reading: break
            default: return .busy
            }
            let step: (consumed: Int, event: RequestParser.Event?)
            do throws(HTTPParseError) {
                step = try pending.withUnsafeBufferPointer { all throws(HTTPParseError) in
                    try parser.next(UnsafeBufferPointer(rebasing: all[pendingStart...]))
                }
            } catch {
                return .refuse(refusal(error))
            }
            let start = pendingStart
            pendingStart += step.consumed
            guard let event = step.event else {
                if step.consumed == 0 { break }
                continue
            }
            switch event {
            case .head(let received):
                head = received
                if case .length(let length) = received.framing, length <= parser.limits.maxBodyBytes {
                    body.reserveCapacity(length)
                }
                // The 100 goes out only for a body the parser will read (an oversize one is
                // refused with 413 on the next step) and that has not started arriving.
                if received.expectsContinue, received.version == .http11, parser.willReadBody,
                   pendingStart == pending.count, !overloaded {
                    return .sendContinue
                }
            case .body(let range):
                body.append(contentsOf: pending[(start + range.lowerBound)..<(start + range.upperBound)])
            case .end:
                state = .handling(Exchange(ending: .keepAlive, readPaused: false))
                let incoming = Incoming(head: head, failure: nil, body: body)
                head = nil
                body = []
                return .dispatch(incoming)
            }
        }
        // (A request line still without its CRLF leaves the parser idle: the unparsed
        // bytes say a request has begun.)
        if case .idle = state, !parser.isIdle || pendingStart < pending.count {
            // The first bytes of a request: it has `client_idle` to arrive whole.
            state = .reading
            return .needMore(arm: arm(idleTimeout))
        }
        return .needMore(arm: nil)
    }

    /// The request cannot be read: its refusal is the handler's to write (DESIGN §3),
    /// and the connection ends after it.
    private mutating func refusal(_ error: HTTPParseError) -> Incoming {
        let incoming = Incoming(head: head, failure: error, body: [])
        head = nil
        body = []
        pending = []
        pendingStart = 0
        state = .handling(Exchange(ending: .close, readPaused: true))
        return incoming
    }

    // MARK: output

    /// The handler's reply is being queued. Returns whether the connection closes after
    /// it: a refused request, a client that finished or did not ask to keep it, the
    /// reply's own `Connection: close`, or a server that is stopping.
    mutating func replying(keepAliveAsked: Bool, closeRequested: Bool, stopping: Bool) -> Bool {
        guard case .handling(var x) = state else {
            illegal("a reply")
            return true
        }
        if x.ending == .keepAlive && (!keepAliveAsked || closeRequested || stopping) { x.ending = .close }
        state = .writing(x)
        return x.ending != .keepAlive
    }

    /// Part of the reply waits for the client to take it: it has `idleTimeout`.
    mutating func awaitingDrain(idleTimeout: Double) -> Double {
        arm(idleTimeout)
    }

    /// Everything queued has reached the socket.
    mutating func drained(idleTimeout: Double, limits: RequestParser.Limits) -> Drained {
        switch state {
        case .writing(let x) where x.ending == .keepAlive:
            state = .idle
            // The next request follows the limits in force now (a reload may have changed them).
            parser.limits = limits
            return .nextRequest(arm: arm(idleTimeout), resumeReading: x.readPaused, parsePending: pendingStart < pending.count)
        case .writing(let x) where x.ending == .peerFinished:
            return .shutdownAndClose
        case .writing(let x):
            state = .lingering(dropped: 0)
            pending = []
            pendingStart = 0
            return .linger(arm: arm(Self.lingerSeconds), resumeReading: x.readPaused)
        case .streaming:
            return .streamDrained
        default:
            return .none
        }
    }

    /// A chunked reply starts instead; it has no deadline.
    mutating func streamStarted() {
        guard case .handling(let x) = state else { return illegal("a stream") }
        state = .streaming(readPaused: x.readPaused)
    }

    /// A tunnel takes over the connection: what was read beyond its request is the
    /// tunnel's first input.
    mutating func takePending() -> [UInt8] {
        let rest = Array(pending[pendingStart...])
        pending = []
        pendingStart = 0
        return rest
    }

    /// The last chunk is queued: the connection closes once it has left. False when no
    /// stream is open.
    mutating func streamEnding() -> Bool {
        guard case .streaming(let paused) = state else { return false }
        state = .writing(Exchange(ending: .close, readPaused: paused))
        return true
    }

    // MARK: deadlines and ending

    /// The armed deadline passed: true when the connection closes for it (a client too
    /// slow to send its request, to take its reply, or to close after it).
    func deadlinePassed() -> Bool {
        switch state {
        case .idle, .reading, .writing, .lingering: true
        case .handling, .streaming, .closed: false
        }
    }

    /// The server stops: a connection between requests closes now, the others after
    /// their reply (`replying` is told `stopping`).
    var closesOnShutdown: Bool { state == .idle }

    /// The connection is closed; returns the state it was in (a stream's end or a
    /// reply's fate is reported from it).
    @discardableResult
    mutating func close() -> State {
        let previous = state
        state = .closed
        pending = []
        pendingStart = 0
        head = nil
        body = []
        shaping = Shaping()
        return previous
    }
}
