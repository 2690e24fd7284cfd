import Tapes

/// A route's `tape:` (DESIGN §2), resolved: the mode and the tape it reads and records.
public struct RouteTape: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case off, record, replay
        case replayOrForward = "replay_or_forward"
    }

    /// How a recorded stream is replayed: with its recorded timing, or at once.
    public enum Timing: String, Sendable {
        case recorded, fast
    }

    public let mode: Mode
    public let recordMisses: Bool
    public let tape: Tape
    public var timing = Timing.recorded

    /// Whether a request may be answered from the tape.
    var replays: Bool { mode == .replay || mode == .replayOrForward }

    /// Whether an upstream answer to a request the tape did not answer is recorded.
    var records: Bool { mode == .record || (mode == .replayOrForward && recordMisses) }
}
