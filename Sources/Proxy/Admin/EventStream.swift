import EventLoop
import HTTPCore
import Telemetry

/// One `/-/events` client: a chunked text/event-stream reply fed from its hub queue.
final class EventStream {
    let request: any ClientExchange
    let subscriber: Subscriber
    let writer: ResponseWriter
    var bytesSent = 0
    /// When the client's unsent backlog first went over the limit; nil while it keeps up.
    var stalledSince: Double?
    var lastWrite: Double
    /// Arms one delivery `EventStreamLimits.batchSeconds` after events start waiting.
    var deliveryTimer: Timer?
    var deliveryPending = false
    static let contentType = "text/event-stream; charset=utf-8"

    init(request: any ClientExchange, subscriber: Subscriber, writer: ResponseWriter, now: Double) {
        self.request = request
        self.subscriber = subscriber
        self.writer = writer
        lastWrite = now
    }
}

/// Why a stream ended: the outcome its completion event carries.
enum StreamEnd {
    case clientClosed
    /// Too far behind for too long: dropped at once, unsent bytes included.
    case evicted
    case shutdown

    var outcome: ResponseWriter.Outcome {
        switch self {
        case .clientClosed: .ok
        case .evicted:
            ResponseWriter.Outcome(label: "evicted", error: "the subscriber fell more than \(EventStreamLimits.backlogBytes) bytes behind for \(EventStreamLimits.stallSeconds) s")
        case .shutdown: ResponseWriter.Outcome(label: "unavailable", error: "the server is shutting down")
        }
    }
}

/// Limits that keep a slow subscriber from costing anyone else anything.
enum EventStreamLimits {
    /// Unsent bytes we hold for one client before we stop taking its events (they then
    /// wait in its hub queue, which drops past `EventHub.subscriberQueueLimit`).
    static let backlogBytes = 128 << 10
    /// A client that stays over the backlog this long is disconnected.
    static let stallSeconds = 5.0
    /// A comment line this often keeps proxies from timing the stream out.
    static let keepaliveSeconds = 15.0
    static let kernelSendBuffer: Int32 = 64 << 10
    static let tickSeconds = 1.0
    /// Events that arrive within this long of the first waiting one leave in the same
    /// write: one write and wake-up per worker flush (5 ms) is more than a page needs,
    /// and a flow still shows well inside 250 ms of its reply (45–65 ms measured).
    static let batchSeconds = 0.025
}
