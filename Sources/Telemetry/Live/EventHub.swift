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

    /// A worker's batch: into the recent ring and, as `frames` (rendered when someone
    /// listened at flush time), every subscriber's queue. Returns the subscribers whose
    /// queue was empty: they need a wake-up.
    @discardableResult
    public func publish(_ batch: [CompletionEvent], frames: EventFrames?) -> [Subscriber] {
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
            guard let frames, !frames.isEmpty else { return [] }
            return s.subscribers.values.filter { $0.enqueue(frames, metrics: metrics) }
        }
    }

    /// One event of another kind (`reachability_changed`) to every subscriber, as an SSE
    /// frame; not kept among the recent completions. Wakes whom it must.
    public func publish(event name: String, json: [UInt8]) {
        guard hasSubscribers else { return }
        let frames = EventFrames(frame: Array("event: \(name)\ndata: ".utf8) + json + Array("\n\n".utf8))
        let toWake = state.withLock { s in s.subscribers.values.filter { $0.enqueue(frames, metrics: metrics) } }
        for subscriber in toWake { subscriber.wake() }
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
