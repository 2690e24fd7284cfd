import Synchronization

/// Completion events shared across workers: the last `recentCapacity` of them (for
/// `/-/recent`) and the live subscribers of `/-/events`. Workers hand events over in
/// batches (a few milliseconds apart), so the request path itself never takes this lock.
public final class EventHub: Sendable {
    public static let recentCapacity = 200
    /// Events one subscriber may have waiting; past it, new events are dropped for it.
    public static let subscriberQueueLimit = 1_000

    struct State {
        var recent: [CompletionEvent] = []
        var recentStart = 0
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
    }

    private let state = Mutex(State())
    /// Its subscriber gauge is the count `hasSubscribers` reads.
    let metrics: MetricsRegistry

    public init(metrics: MetricsRegistry) { self.metrics = metrics }

    /// True when someone listens (one atomic load; workers skip building batches for
    /// the stream otherwise — the recent ring still gets them).
    public var hasSubscribers: Bool { metrics.eventSubscribers.load(ordering: .relaxed) > 0 }

    /// A worker's batch: into the recent ring and every subscriber's queue. Returns the
    /// subscribers whose queue was empty: they need a wake-up.
    @discardableResult
    public func publish(_ batch: [CompletionEvent]) -> [Subscriber] {
        guard !batch.isEmpty else { return [] }
        return state.withLock { s in
            for event in batch {
                if s.recent.count < Self.recentCapacity {
                    s.recent.append(event)
                } else {
                    s.recent[s.recentStart] = event
                    s.recentStart = (s.recentStart + 1) % Self.recentCapacity
                }
            }
            return s.subscribers.values.filter { $0.enqueue(batch, metrics: metrics) }
        }
    }

    /// The last completions, in the order they finished (workers hand over batches a
    /// few milliseconds apart, so arrival order is not completion order).
    public func recent() -> [CompletionEvent] {
        let events = state.withLock { s in Array(s.recent[s.recentStart...] + s.recent[..<s.recentStart]) }
        return events.enumerated().sorted {
            let (a, b) = ($0.element.startedAt + $0.element.duration, $1.element.startedAt + $1.element.duration)
            return a != b ? a < b : $0.offset < $1.offset
        }.map(\.element)
    }

    /// `wake` runs on a publishing worker's thread when events arrive for an empty
    /// queue; it must only signal the subscriber's own worker.
    public func subscribe(owner: OwnerToken, wake: @escaping @Sendable () -> Void) -> Subscriber {
        let subscriber = Subscriber(owner: owner, wake: wake)
        state.withLock { $0.subscribers[ObjectIdentifier(subscriber)] = subscriber }
        metrics.eventSubscribers.add(1, ordering: .relaxed)
        return subscriber
    }

    public func unsubscribe(_ subscriber: Subscriber) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscriber)) != nil }
        guard removed else { return }
        metrics.eventSubscribers.subtract(1, ordering: .relaxed)
    }

    /// Counts a subscriber disconnected for falling behind.
    public func countEviction() { metrics.eventEvictions.add(1, ordering: .relaxed) }
}

/// One `/-/events` client's queue, filled by publishers and drained by its own worker.
public final class Subscriber: Sendable {
    struct Queue {
        var events: [CompletionEvent] = []
        var dropped = 0
    }

    private let queue = Mutex(Queue())
    /// Runs on a publishing worker's thread; signals the owning worker.
    public let wake: @Sendable () -> Void
    public let owner: OwnerToken

    init(owner: OwnerToken, wake: @escaping @Sendable () -> Void) {
        self.owner = owner
        self.wake = wake
    }

    /// Appends what fits; true when the queue was empty (the owner needs a wake-up).
    func enqueue(_ batch: [CompletionEvent], metrics: MetricsRegistry) -> Bool {
        queue.withLock { q in
            let wasEmpty = q.events.isEmpty
            let room = max(0, EventHub.subscriberQueueLimit - q.events.count)
            q.events.append(contentsOf: batch.prefix(room))
            let dropped = batch.count - min(room, batch.count)
            if dropped > 0 {
                q.dropped += dropped
                metrics.eventDrops.add(UInt64(dropped))
            }
            return wasEmpty && room > 0
        }
    }

    /// Up to `limit` waiting events, oldest first, and how many were dropped since the
    /// last take.
    public func take(limit: Int) -> (events: [CompletionEvent], dropped: Int) {
        queue.withLock { q in
            let events = Array(q.events.prefix(limit))
            q.events.removeFirst(events.count)
            defer { q.dropped = 0 }
            return (events, q.dropped)
        }
    }
}
