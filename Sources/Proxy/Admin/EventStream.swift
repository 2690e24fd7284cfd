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
