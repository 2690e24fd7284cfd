internal import CLibevent
import HTTPCore

/// The pace of one shaped reply (or request body being read) on its connection: when its
/// bytes may move, and its own timer (made only when shaping, so an unshaped connection
/// costs nothing more).
final class Pacer {
    let timer: OpaquePointer
    /// Monotonic time of the first byte.
    let start: Double
    let rate: Int?
    let ending: ReplyShaping.Ending
    /// Bytes sent (or read) so far.
    var sent = 0
    /// Past this, the connection closes.
    let giveUpAt: Double
    let budget: ProcessBudget

    init?(base: OpaquePointer, owner: UnsafeMutableRawPointer, callback: event_callback_fn, shaping: ReplyShaping, now: Double,
          budget: ProcessBudget) {
        guard let timer = event_new(base, -1, 0, callback, owner) else { return nil }
        self.timer = timer
        self.budget = budget
        budget.shapingStarted()
        start = now + shaping.delay
        rate = shaping.bytesPerSecond
        ending = shaping.ending
        giveUpAt = start + ReplyShaping.maxSeconds
    }

    /// At most this many bytes leave in one step: about 50 steps a second.
    var chunk: Int { rate.map { min(max($0 / 50, 1), 256 << 10) } ?? Int.max }

    /// How many bytes may leave now; 0 means wait.
    func allowance(now: Double) -> Int {
        guard now >= start else { return 0 }
        guard let rate else { return Int.max }
        let earned = Int(min((now - start) * Double(rate), Double(Int.max >> 1)))
        return max(0, earned + chunk - sent)
    }

    /// Seconds until the next chunk may leave.
    func wait(now: Double) -> Double {
        if now < start { return start - now }
        guard let rate else { return 0 }
        return max(0, start + Double(sent) / Double(rate) - now)
    }

    func wake(after seconds: Double) -> Bool {
        var tv = timeval(seconds: seconds)
        return event_add(timer, &tv) == 0
    }

    deinit {
        budget.shapingEnded()
        event_del(timer)
        event_free(timer)
    }
}
