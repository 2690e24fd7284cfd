internal import CLibevent
import HTTPCore

/// The timer that wakes a connection when its pace allows the next step, made only while
/// shaping (an unshaped connection costs nothing more); counted as a shaped reply in the
/// process budget while it lives.
final class PaceTimer {
    let timer: OpaquePointer
    let budget: ProcessBudget

    init?(base: OpaquePointer, owner: UnsafeMutableRawPointer, callback: event_callback_fn, budget: ProcessBudget) {
        guard let timer = event_new(base, -1, 0, callback, owner) else { return nil }
        self.timer = timer
        self.budget = budget
        budget.shapingStarted()
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
