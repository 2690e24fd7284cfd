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
}

extension Worker {
    func openStream(_ request: any ClientExchange, writer: ResponseWriter) {
        let mailbox = self.mailbox
        let subscriber = shared.hub.subscribe(owner: telemetry.owner) { mailbox.post(.events) }
        let stream = EventStream(request: request, subscriber: subscriber, writer: writer, now: Clock.now())
        // Streams are keyed by their subscriber, which is what the hub hands back.
        let id = ObjectIdentifier(subscriber)
        let headers = [("Content-Type", EventStream.contentType), ("Cache-Control", "no-cache"),
                       ("X-Request-Id", writer.requestID)]
        let started = request.startStream(status: 200, headers: headers, sendBuffer: EventStreamLimits.kernelSendBuffer,
                                          onDrained: { [unowned self] in if let stream = self.streams[id] { self.deliver(stream, id: id) } },
                                          onClose: { [unowned self] in self.endStream(id, .clientClosed) })
        guard started else {
            shared.hub.unsubscribe(subscriber)
            return
        }
        streams[id] = stream
        send(stream, Array(": serializerd \(writer.requestID)\nretry: 2000\n\n".utf8))
        startStreamTicks()
    }

    /// A subscriber of this worker has events (from this worker's own flush).
    func deliverLocally(_ subscriber: Subscriber) {
        let id = ObjectIdentifier(subscriber)
        if let stream = streams[id] { deliver(stream, id: id) }
    }

    /// Hands each stream what its queue holds, unless its client is behind.
    func deliverEvents() {
        for (id, stream) in streams { deliver(stream, id: id) }
    }

    /// Writes up to the backlog limit; the rest waits in the hub queue until the client
    /// drains (`onDrained`) or the next tick. A client stuck behind is evicted.
    func deliver(_ stream: EventStream, id: ObjectIdentifier) {
        let now = Clock.now()
        if stream.request.bufferedBytes > EventStreamLimits.backlogBytes {
            let since = stream.stalledSince ?? now
            stream.stalledSince = since
            if now - since >= EventStreamLimits.stallSeconds {
                shared.hub.countEviction()
                endStream(id, .evicted)
            }
            return
        }
        stream.stalledSince = nil
        // Only as much as keeps the backlog near its limit; the rest waits in the hub
        // queue, which is where drops are counted.
        let room = (EventStreamLimits.backlogBytes - stream.request.bufferedBytes) / 512 + 1
        let (events, dropped) = stream.subscriber.take(limit: room)
        var text: [UInt8] = []
        if dropped > 0 { text += Array("event: dropped\ndata: {\"dropped\":\(dropped)}\n\n".utf8) }
        for event in events {
            text += Array("event: request_completed\nid: ".utf8)
            text += Array(event.requestID.utf8)
            text += Array("\ndata: ".utf8)
            text += event.json
            text += [0x0A, 0x0A]
        }
        if text.isEmpty, now - stream.lastWrite >= EventStreamLimits.keepaliveSeconds { text = Array(": keepalive\n\n".utf8) }
        send(stream, text)
    }

    private func send(_ stream: EventStream, _ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        stream.request.write(bytes)
        stream.bytesSent += bytes.count
        stream.lastWrite = Clock.now()
    }

    /// Ends one stream; its completion event goes out now, with everything it streamed.
    func endStream(_ id: ObjectIdentifier, _ end: StreamEnd) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        shared.hub.unsubscribe(stream.subscriber)
        if case .evicted = end { stream.request.abortStream() } else { stream.request.endStream() }
        stream.writer.record(status: 200, bytesOut: stream.bytesSent, outcome: end.outcome,
                             duration: Clock.now() - stream.writer.started, responseContentType: EventStream.contentType)
        if streams.isEmpty { stopStreamTicks() }
    }

    func closeStreams() {
        for id in Array(streams.keys) { endStream(id, .shutdown) }
    }

    /// While streams exist: retry blocked deliveries, send keepalives, evict the stalled.
    func startStreamTicks() {
        guard streamTimer == nil else { return }
        let timer = loop.makeTimer(repeating: true) { [unowned self] in self.deliverEvents() }
        timer.schedule(after: EventStreamLimits.tickSeconds)
        streamTimer = timer
    }

    func stopStreamTicks() {
        streamTimer?.cancel()
        streamTimer = nil
    }
}
