import EventLoop
import HTTPCore
import Telemetry

extension Worker {
    /// `GET /-/events`: the live event stream.
    func serveEvents(_ r: AdminRequest) { openStream(r.exchange, writer: r.writer) }

    func openStream(_ request: any ClientExchange, writer: ResponseWriter) {
        let mailbox = self.mailbox
        let subscriber = shared.hub.subscribe(owner: telemetry.owner) { mailbox.post(.events) }
        let stream = EventStream(request: request, subscriber: subscriber, writer: writer, now: Clock.now())
        // Streams are keyed by their subscriber, which is what the hub hands back.
        let id = ObjectIdentifier(subscriber)
        let headers = HeaderFields([("Content-Type", EventStream.contentType), ("Cache-Control", "no-cache"),
                       ("X-Request-Id", writer.context.requestID)])
        let started = request.startStream(status: 200, headers: headers, sendBuffer: EventStreamLimits.kernelSendBuffer,
                                          onDrained: { [unowned self] in if let stream = self.streams[id] { self.deliver(stream, id: id) } },
                                          onClose: { [unowned self] in self.endStream(id, .clientClosed) })
        guard started else {
            shared.hub.unsubscribe(subscriber)
            return
        }
        stream.deliveryTimer = loop.makeTimer { [unowned self] in
            guard let stream = self.streams[id] else { return }
            stream.deliveryPending = false
            self.deliver(stream, id: id)
        }
        streams[id] = stream
        send(stream, Array(": serializerd \(writer.context.requestID)\nretry: 2000\n\n".utf8))
        startStreamTicks()
    }

    /// A subscriber of this worker has events (from this worker's own flush).
    func deliverLocally(_ subscriber: Subscriber) {
        let id = ObjectIdentifier(subscriber)
        if let stream = streams[id] { deliverSoon(stream, id: id) }
    }

    /// Events are waiting for some of this worker's streams (another worker's wake-up).
    func deliverEvents() {
        for (id, stream) in streams { deliverSoon(stream, id: id) }
    }

    /// Arms the stream's delivery unless it is armed: what arrives meanwhile joins it.
    /// A queue already half full goes now.
    private func deliverSoon(_ stream: EventStream, id: ObjectIdentifier) {
        if stream.subscriber.waiting >= Subscriber.urgent { return deliver(stream, id: id) }
        guard !stream.deliveryPending else { return }
        stream.deliveryPending = true
        stream.deliveryTimer?.schedule(after: EventStreamLimits.batchSeconds)
    }

    /// The tick: retries blocked deliveries, sends keepalives, evicts the stalled.
    private func tickStreams() {
        for (id, stream) in streams { deliver(stream, id: id) }
    }

    /// Writes up to the backlog limit, for as long as the socket takes it all; the rest
    /// waits in the hub queue until the client drains (`onDrained`) or the next tick. A
    /// client stuck behind is evicted.
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
        var sent = false
        // Only as much as keeps the backlog near its limit; the rest waits in the hub
        // queue, which is where drops are counted.
        repeat {
            let (frames, _, dropped) = stream.subscriber.take(maxBytes: EventStreamLimits.backlogBytes - stream.request.bufferedBytes)
            var text = frames
            if dropped > 0 { text = Array("event: dropped\ndata: {\"dropped\":\(dropped)}\n\n".utf8) + frames }
            guard !text.isEmpty else { break }
            send(stream, text)
            sent = true
        } while stream.request.bufferedBytes == 0 && stream.subscriber.waiting > 0
        if !sent, now - stream.lastWrite >= EventStreamLimits.keepaliveSeconds { send(stream, Array(": keepalive\n\n".utf8)) }
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
        stream.deliveryTimer?.cancel()
        shared.hub.unsubscribe(stream.subscriber)
        if case .evicted = end { stream.request.abortStream() } else { stream.request.endStream() }
        let context = stream.writer.context
        context.recorder.record(context, status: 200, bytesOut: stream.bytesSent, outcome: end.outcome,
                                duration: Clock.now() - context.started, responseContentType: EventStream.contentType)
        if streams.isEmpty { stopStreamTicks() }
    }

    func closeStreams() {
        for id in Array(streams.keys) { endStream(id, .shutdown) }
    }

    /// While streams exist: retry blocked deliveries, send keepalives, evict the stalled.
    func startStreamTicks() {
        guard streamTimer == nil else { return }
        let timer = loop.makeTimer(repeating: true) { [unowned self] in self.tickStreams() }
        timer.schedule(after: EventStreamLimits.tickSeconds)
        streamTimer = timer
    }

    func stopStreamTicks() {
        streamTimer?.cancel()
        streamTimer = nil
    }
}
