import Synchronization

/// `limits.concurrency` (DESIGN §11): one route's upstream requests in flight, across every
/// worker, with a FIFO queue behind them. A request that enters holds a slot until it
/// leaves; one that finds them all taken waits in the queue (up to `queue` of them) and
/// is woken, on its own worker, when a leaving request hands it its slot.
public final class UpstreamGate: Sendable {
    public enum Entry: Equatable, Sendable {
        /// A slot is held: send it, then `leave`.
        case go
        /// Queued as `id`: `wake(id)` runs (on the leaving request's thread) when a slot
        /// is handed over; `cancel(id)` gives the place up.
        case queued(UInt64)
        /// Every slot taken and the queue full.
        case full
    }

    struct Waiter {
        let id: UInt64
        let wake: @Sendable (UInt64) -> Void
    }

    struct State {
        var limit: Int
        var queueLimit: Int
        var inFlight = 0
        var waiting: [Waiter] = []
    }

    private let state: Mutex<State>
    /// Waiter ids, unique in the process: a worker finds its waiter by id alone.
    private static let ids = Atomic<UInt64>(0)

    public init(limit: Int, queue: Int) {
        precondition(limit > 0 && queue >= 0)
        state = Mutex(State(limit: limit, queueLimit: queue))
    }

    /// New limits from a reload: requests in flight and waiting keep their places; more
    /// room wakes waiters at once.
    public func update(limit: Int, queue: Int) {
        precondition(limit > 0 && queue >= 0)
        let woken: [Waiter] = state.withLock { s in
            s.limit = limit
            s.queueLimit = queue
            return Self.handOver(&s)
        }
        for waiter in woken { waiter.wake(waiter.id) }
    }

    public func enter(wake: @escaping @Sendable (UInt64) -> Void) -> Entry {
        state.withLock { s in
            if s.inFlight < s.limit && s.waiting.isEmpty {
                s.inFlight += 1
                return .go
            }
            guard s.waiting.count < s.queueLimit else { return .full }
            let id = Self.ids.wrappingAdd(1, ordering: .relaxed).newValue
            s.waiting.append(Waiter(id: id, wake: wake))
            return .queued(id)
        }
    }

    /// A held slot is given back: the first waiter gets it.
    public func leave() {
        let woken: [Waiter] = state.withLock { s in
            s.inFlight -= 1
            return Self.handOver(&s)
        }
        for waiter in woken { waiter.wake(waiter.id) }
    }

    /// Gives up a place in the queue: true when it was still waiting; false when it was
    /// already handed a slot (its wake has run or is running, and the slot is its to leave).
    public func cancel(_ id: UInt64) -> Bool {
        state.withLock { s in
            guard let at = s.waiting.firstIndex(where: { $0.id == id }) else { return false }
            s.waiting.remove(at: at)
            return true
        }
    }

    /// Requests holding a slot, and waiting.
    public var counts: (inFlight: Int, waiting: Int) { state.withLock { ($0.inFlight, $0.waiting.count) } }

    /// Slots free go to the first waiters, oldest first.
    private static func handOver(_ s: inout State) -> [Waiter] {
        var woken: [Waiter] = []
        while s.inFlight < s.limit, !s.waiting.isEmpty {
            woken.append(s.waiting.removeFirst())
            s.inFlight += 1
        }
        return woken
    }
}
