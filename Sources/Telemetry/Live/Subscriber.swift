import Synchronization

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
