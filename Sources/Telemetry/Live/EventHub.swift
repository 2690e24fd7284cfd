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

/// Events as `/-/events` sends them: each one's Server-Sent Events frame, back to back.
/// A worker renders its batch once, whoever listens, and every subscriber's queue shares
/// the bytes.
public struct EventFrames: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Where each event's frame ends in `bytes`.
    private(set) var ends: [Int] = []

    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }

    init() {}

    /// One whole frame, as given.
    init(frame: [UInt8]) {
        bytes = frame
        ends = [frame.count]
    }

    public init(_ batch: [CompletionEvent]) {
        var clock = LogClock()
        var scratch: [UInt8] = []
        self.init(batch, clock: &clock, scratch: &scratch)
    }

    /// `event: request_completed`, the request id as the SSE id, the event's JSON as data.
    /// Written into `scratch` (the worker's, grown to the worst case), then kept at its
    /// size: queues hold these bytes until a slow page reads them.
    init(_ batch: [CompletionEvent], clock: inout LogClock, scratch: inout [UInt8]) {
        let frameBound = Self.head.utf8CodeUnitCount + Self.data.utf8CodeUnitCount + 2
        let bound = batch.reduce(0) { $0 + frameBound + $1.requestID.utf8.count + ($1.rendered?.count ?? $1.jsonBound) }
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        var ends: [Int] = []
        ends.reserveCapacity(batch.count)
        bytes = scratch.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var w = RawJSONWriter(base)
            for event in batch {
                w.raw(Self.head)
                var id = event.requestID
                id.withUTF8 { w.copy($0) }
                w.raw(Self.data)
                if let rendered = event.rendered {
                    rendered.withUnsafeBufferPointer { w.copy($0) }
                } else {
                    w.p += event.writeJSON(to: w.p, clock: &clock)
                }
                w.raw("\n\n")
                ends.append(w.p - base)
            }
            return Array(UnsafeBufferPointer(start: base, count: w.p - base))
        }
        self.ends = ends
    }

    private static let head: StaticString = "event: request_completed\nid: "
    private static let data: StaticString = "\ndata: "

    /// The first `n` frames (n ≥ 1).
    func prefix(_ n: Int) -> EventFrames {
        guard n < count else { return self }
        var part = EventFrames()
        part.ends = Array(ends[..<n])
        part.bytes = Array(bytes[..<ends[n - 1]])
        return part
    }

    /// Where frame `i` starts.
    func start(_ i: Int) -> Int { i == 0 ? 0 : ends[i - 1] }
}

/// One `/-/events` client's queue, filled by publishers and drained by its own worker.
public final class Subscriber: Sendable {
    struct Queue {
        var pieces: [EventFrames] = []
        /// Frames of `pieces[0]` already taken.
        var taken = 0
        /// Frames waiting, over all pieces.
        var waiting = 0
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

    /// Appends what fits; true when the owner needs a wake-up: the queue was empty, or
    /// it has just filled past half its limit (time to send without waiting).
    func enqueue(_ frames: EventFrames, metrics: MetricsRegistry) -> Bool {
        queue.withLock { q in
            let before = q.waiting
            let room = max(0, EventHub.subscriberQueueLimit - q.waiting)
            let admitted = min(room, frames.count)
            if admitted > 0 {
                q.pieces.append(frames.prefix(admitted))
                q.waiting += admitted
            }
            let dropped = frames.count - admitted
            if dropped > 0 {
                q.dropped += dropped
                metrics.eventDrops.add(UInt64(dropped))
            }
            return admitted > 0 && (before == 0 || (before < Self.urgent && q.waiting >= Self.urgent))
        }
    }

    /// Waiting events past which a delivery should not wait to gather more.
    public static let urgent = EventHub.subscriberQueueLimit / 2

    /// Events waiting.
    public var waiting: Int { queue.withLock { $0.waiting } }

    /// Whole frames, oldest first, up to `maxBytes` (at least one when any wait): their
    /// bytes, how many, and how many were dropped since the last take.
    public func take(maxBytes: Int) -> (bytes: [UInt8], events: Int, dropped: Int) {
        queue.withLock { q in
            // Which frames go first, then one copy into a buffer of their size.
            var spans: [(piece: Int, from: Int, to: Int)] = []
            var size = 0, events = 0, taken = q.taken
            for (index, piece) in q.pieces.enumerated() {
                let base = piece.start(taken)
                var end = taken
                while end < piece.count, events + (end - taken) == 0 || size + piece.ends[end] - base <= maxBytes {
                    end += 1
                }
                if end > taken {
                    spans.append((index, base, piece.ends[end - 1]))
                    size += piece.ends[end - 1] - base
                    events += end - taken
                }
                guard end == piece.count else {
                    taken = end
                    break
                }
                taken = 0
            }
            var out: [UInt8] = []
            if spans.count == 1, spans[0].from == 0, spans[0].to == q.pieces[spans[0].piece].bytes.count {
                out = q.pieces[spans[0].piece].bytes   // a whole batch: shared, not copied
            } else {
                out.reserveCapacity(size)
                for span in spans { out.append(contentsOf: q.pieces[span.piece].bytes[span.from..<span.to]) }
            }
            // Pieces before the one still being read (or all of them) are done.
            let done = spans.last.map { taken == 0 ? $0.piece + 1 : $0.piece } ?? 0
            q.pieces.removeFirst(min(done, q.pieces.count))
            q.taken = taken
            q.waiting -= events
            defer { q.dropped = 0 }
            return (out, events, q.dropped)
        }
    }
}
