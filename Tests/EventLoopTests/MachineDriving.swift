@testable import EventLoop
import HTTPCore
import Testing

/// The clock a connection machine reads in tests: it moves when the test moves it.
final class MachineClock {
    var now = 1_000.0
}

/// Driving a `ConnectionMachine` without a socket: bytes and events in, steps out.
protocol MachineDriving {
    var clock: MachineClock { get }
}

extension MachineDriving {
    static var limits: RequestParser.Limits { .init(maxHeadBytes: 8 << 10, maxBodyBytes: 1 << 20) }
    static var idle: Double { 5.0 }
    static var get: String { "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" }

    func fresh(limits: RequestParser.Limits = Self.limits) -> ConnectionMachine {
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

    func drained(_ m: inout ConnectionMachine, limits: RequestParser.Limits = Self.limits) -> ConnectionMachine.Drained {
        m.drained(idleTimeout: Self.idle, limits: limits)
    }

    /// A machine with one GET in hand.
    func handling(_ request: String = Self.get) -> ConnectionMachine {
        var m = fresh()
        feed(&m, request)
        _ = next(&m)
        return m
    }

    static var keep: ConnectionMachine.Exchange { .init(ending: .keepAlive, readPaused: false) }
}
