/// The worker's side of its shard: lookup caches only the worker touches, so a
/// request finds its cells without the shard's mutex. The metrics sink.
public final class MetricsRecorder: CompletionSink {
    let shard: MetricsShard
    private var requests: [RequestSeries: Cell] = [:]
    private var routes: [String: RouteCells] = [:]
    private var serialization: [SerializerSeries: HistogramCells] = [:]
    /// The cells the previous event used: a run of requests to one route with one outcome
    /// (the usual traffic) compares a few Strings instead of hashing them.
    private var lastSeries = RequestSeries(route: "", method: "", code: 0, outcome: "")
    private var lastCounter: Cell?
    private var lastCells: RouteCells?
    private var lastSerializerKey = SerializerSeries(route: "", serializer: "")
    private var lastSerializerCells: HistogramCells?

    init(shard: MetricsShard) { self.shard = shard }

    public func record(_ event: CompletionEvent) {
        let series = RequestSeries(route: event.route, method: event.method, code: event.status, outcome: event.outcome)
        let counter: Cell, cells: RouteCells
        if let lastCounter, let lastCells, lastSeries == series {
            (counter, cells) = (lastCounter, lastCells)
        } else {
            counter = requests[series] ?? {
                let cell = shard.register(series)
                requests[series] = cell
                return cell
            }()
            cells = routes[event.route] ?? {
                let cells = shard.register(route: event.route)
                routes[event.route] = cells
                return cells
            }()
            (lastSeries, lastCounter, lastCells) = (series, counter, cells)
        }
        counter.add(1)
        cells.requestDuration.observe(event.duration)
        if let upstream = event.upstreamDuration { cells.upstreamDuration.observe(upstream) }
        cells.upstreamBytes.add(UInt64(event.bytesIn))
        cells.responseBytes.add(UInt64(event.bytesOut))
        if let unsafe = event.unsafeNumbers, unsafe > 0 { cells.unsafeNumbers.add(UInt64(unsafe)) }
        if let violations = event.contractViolations, violations > 0 { cells.contractViolations.add(1) }
        if let version = event.httpVersion, let at = RouteCells.httpVersions.firstIndex(of: version) { cells.upstreamRequests[at].add(1) }
        if let cache = event.cache, let at = RouteCells.cacheResults.firstIndex(of: cache) { cells.cache[at].add(1) }
        if let faults = event.faults {
            for item in faults.split(separator: ",") {
                let kind = RouteCells.faultKind(item.drop { $0 == " " })
                if let at = RouteCells.faultKinds.firstIndex(of: kind) { cells.faults[at].add(1) }
            }
        }
        if let serializer = event.serializer, let seconds = event.serializeDuration {
            let key = SerializerSeries(route: event.route, serializer: serializer)
            if let lastSerializerCells, lastSerializerKey == key { return lastSerializerCells.observe(seconds) }
            let histogram = serialization[key] ?? {
                let cells = shard.register(key)
                serialization[key] = cells
                return cells
            }()
            (lastSerializerKey, lastSerializerCells) = (key, histogram)
            histogram.observe(seconds)
        }
    }

    /// A `Serializerd-Fault` or `Serializerd-Chaos` header that was not honoured.
    public func ignoredFaultHeader(route: String) {
        cells(route).faults[RouteCells.faultKinds.count - 1].add(1)
    }

    private func cells(_ route: String) -> RouteCells {
        routes[route] ?? {
            let cells = shard.register(route: route)
            routes[route] = cells
            return cells
        }()
    }

    /// A stream's counters (DESIGN §9): held by it for its life, counted as events pass.
    public func stream(route: String, kind: String) -> StreamCounters? {
        guard let at = RouteCells.streamKinds.firstIndex(of: kind) else { return nil }
        let cells = cells(route)
        let results = RouteCells.streamResults.count
        return StreamCounters(open: cells.openStreams[at], ok: cells.streamEvents[at * results],
                              invalid: cells.streamEvents[at * results + 1], dropped: cells.streamEvents[at * results + 2])
    }

    /// A WebSocket's cells: `kind="websocket"` of the stream families, and its messages.
    public func webSocket(route: String) -> WebSocketCounters? {
        guard let at = RouteCells.streamKinds.firstIndex(of: "websocket") else { return nil }
        let cells = cells(route)
        let results = RouteCells.streamResults.count
        return WebSocketCounters(stream: StreamCounters(open: cells.openStreams[at], ok: cells.streamEvents[at * results],
                                                        invalid: cells.streamEvents[at * results + 1],
                                                        dropped: cells.streamEvents[at * results + 2]),
                                 toClient: cells.webSocketMessages[0], toUpstream: cells.webSocketMessages[1])
    }

    /// The worker's in-flight count (a gauge the scrape sums over workers).
    public func setInflight(_ count: Int) { shard.inflight.set(UInt64(max(0, count))) }
}

/// One stream's metric cells: the open gauge and its events by result.
public struct StreamCounters {
    let open: Cell, ok: Cell, invalid: Cell, dropped: Cell

    public func opened() { open.add(1) }
    public func closed() { open.set(open.value &- 1) }
    public func event(ok count: Int = 1) { ok.add(UInt64(count)) }
    public func invalidEvent() { invalid.add(1) }
    public func droppedEvent() { dropped.add(1) }
}

/// One WebSocket's metric cells. Messages to the client are its stream events: ok, or
/// refused by `normalize: json` (invalid, then dropped when `on_invalid` drops them).
public struct WebSocketCounters {
    let stream: StreamCounters
    let toClient: Cell, toUpstream: Cell

    public func opened() { stream.opened() }
    public func closed() { stream.closed() }
    public func message(toClient: Bool) {
        if toClient {
            self.toClient.add(1)
            stream.event()
        } else {
            toUpstream.add(1)
        }
    }
    public func invalid() { stream.invalidEvent() }
    public func dropped() { stream.droppedEvent() }
}
