import HTTPCore
import Network
import Serializers
import Upstream

/// What a relay writes: its reply head, and each SSE event or NDJSON record as the
/// route's serializer and `stream.on_invalid` make it.
extension StreamRelay {
    func replyHead(contentType: String?, now: Double) -> HeaderFields {
        var headers = HeaderFields()
        switch kind {
        case .sse: headers.append("Content-Type", "text/event-stream")
        case .ndjson: headers.append("Content-Type", "application/x-ndjson")
        case .bytes: headers.append("Content-Type", contentType ?? "application/octet-stream")
        }
        headers.append("Cache-Control", "no-cache")
        headers.append("X-Request-Id", context.requestID)
        headers.append("Serializerd-Source", context.source.rawValue)
        if let cache = context.cache { headers.append("Cache-Status", cache.status) }
        if let applied = context.network?.appliedText { headers.append("Serializerd-Fault-Applied", applied) }
        headers.append("Server-Timing", "upstream;dur=" + NumberText.milliseconds(now - context.upstreamSentAt))
        return headers
    }

    func flush() {
        guard !out.isEmpty, open else { return }
        guard let rate = downRate else {
            bytesOut += out.count
            client.write(out)
            return out.removeAll(keepingCapacity: true)
        }
        // `network.down`: what the pace allows leaves now (about 50 steps a second); the
        // rest waits here, counted by the backpressure, for the pace timer.
        let now = clock.now()
        if paceStart == 0 { paceStart = now }
        let step = min(max(rate / 50, 1), 256 << 10)
        let allowed = Int(min((now - paceStart) * Double(rate), Double(Int.max >> 1))) + step - paceSent
        let take = min(max(0, allowed), out.count)
        if take > 0 {
            paceSent += take
            bytesOut += take
            client.write(Array(out[..<take]))
            out.removeFirst(take)
        }
        guard !out.isEmpty else { return }
        if paceTimer == nil { paceTimer = pipeline.makeTimer?({ [link] in link.relay?.paceTick() }) }
        paceTimer?.schedule(after: max(0.001, paceStart + Double(paceSent) / Double(rate) - now))
    }

    func handle(_ item: EventStreamParser.Item) {
        switch item {
        case .comment(let text):
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: text)
            out.append(0x0A)
        case .tooLong:
            refused(original: nil, error: .serializationFailed(serializer: route.response.serializer.rawValue,
                                                               detail: "the event is longer than \(route.stream.maxMessage) bytes",
                                                               underlying: nil))
        case .event(let event):
            guard let data = event.data else {
                // `id` or `retry` alone: no event, but the client keeps them.
                appendFields(event)
                out.append(0x0A)
                return
            }
            if passes || data.isEmpty || route.stream.sentinels.contains(data) {
                counters?.event()
                return appendEvent(event, data: data)
            }
            let result = route.serializeEvent(damaged(data))
            if result.succeeded, let value = result.value {
                counters?.event()
                appendEvent(event, data: value.bytes)
            } else {
                refused(original: event, error: result.error)
            }
        }
    }

    func handle(record: [UInt8]?) {
        guard let record else {
            return refused(original: nil, error: .serializationFailed(serializer: route.response.serializer.rawValue,
                                                                        detail: "the record is longer than \(route.stream.maxMessage) bytes",
                                                                        underlying: nil))
        }
        if passes || route.stream.sentinels.contains(record) {
            counters?.event()
            return appendLine(record)
        }
        let result = route.serializeEvent(damaged(record))
        if result.succeeded, let value = result.value {
            counters?.event()
            appendLine(value.bytes)
        } else {
            refused(originalRecord: record, error: result.error)
        }
    }

    /// An event's data after the route's chaos operations (DESIGN §9: chaos applies to
    /// each event), as JSON.
    func damaged(_ data: [UInt8]) -> [UInt8] {
        guard let plan = context.network, !plan.chaos.isEmpty else { return data }
        let answer = UpstreamResponse(status: status, contentType: "application/json", body: data)
        let (damaged, applied) = Chaos.apply(plan.chaos, to: answer, maxDepth: pipeline.config.limits.maxJSONDepth)
        // Each operation named once, however many events it changed.
        for operation in applied where !plan.applied.contains(operation) { plan.applied.append(operation) }
        return damaged.body
    }

    /// An event the serializer refused, by `stream.on_invalid`. One too long to hold has
    /// no original to pass, so `pass` drops it.
    func refused(original: EventStreamParser.Event? = nil, originalRecord: [UInt8]? = nil, error: SerializationError?) {
        let mode = route.stream.onInvalid
        let hasOriginal = original != nil || originalRecord != nil
        if mode == .drop || (mode == .pass && !hasOriginal) {
            dropped += 1
            counters?.droppedEvent()
            return
        }
        invalid += 1
        counters?.invalidEvent()
        if mode == .pass {
            if let original, let data = original.data { appendEvent(original, data: data) }
            if let originalRecord { appendLine(originalRecord) }
            return
        }
        let error = error ?? .serializationFailed(serializer: route.response.serializer.rawValue, detail: "no value", underlying: nil)
        let evidence = UpstreamEvidence(UpstreamResponse(status: status, contentType: nil, body: original?.data ?? originalRecord ?? []),
                                        shownURL: pipeline.config.capture.url(context.url), parsed: nil)
        let problem = ProblemDocument.render(.response(error, upstream: evidence), route: route.name, requestID: context.requestID)
        if kind == .sse { appendErrorEvent(problem) } else { appendLine(problem) }
        if mode == .close { closing = true }
    }

    func appendFields(_ event: EventStreamParser.Event) {
        if let name = event.event { appendField("event", name) }
        if let id = event.id { appendField("id", id) }
        if let retry = event.retry { appendField("retry", retry) }
    }

    func appendField(_ name: StaticString, _ value: [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: ":"))
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: value)
        out.append(0x0A)
    }

    /// One `data:` line and the event's blank line.
    private func appendData(_ value: [UInt8]) {
        out.append(contentsOf: Self.dataPrefix)
        out.append(contentsOf: value)
        out.append(0x0A)
        out.append(0x0A)
    }

    static let dataPrefix = Array("data: ".utf8)

    /// One event: its fields, then its data a `data:` line per line.
    func appendEvent(_ event: EventStreamParser.Event, data: [UInt8]) {
        events += 1
        if hub.hasSubscribers {
            pipeline.noteStreamEvent(&recentEvents, context, kind: kind.name, direction: nil,
                                     label: event.event.map { String(decoding: $0, as: UTF8.self) }, data: data)
        }
        appendFields(event)
        // Normalized JSON is one line: split (and copied) only when the data has several.
        guard data.containsByte(0x0A) else { return appendData(data) }
        for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) { appendField("data", Array(line)) }
        out.append(0x0A)
    }

    func appendErrorEvent(_ problem: [UInt8]) {
        events += 1
        pipeline.noteStreamEvent(&recentEvents, context, kind: kind.name, direction: nil, label: "serializerd-error", data: problem)
        appendField("event", Array("serializerd-error".utf8))
        appendField("data", problem)
        out.append(0x0A)
    }

    func appendLine(_ record: [UInt8]) {
        events += 1
        pipeline.noteStreamEvent(&recentEvents, context, kind: kind.name, direction: nil, label: nil, data: record)
        out.append(contentsOf: record)
        out.append(0x0A)
    }
}
