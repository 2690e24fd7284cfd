import HTTPCore
import Synchronization

/// Process-wide metrics: one shard per worker (merged here at scrape time) plus the few
/// counters the main thread and the event hub own. Rendered as Prometheus text 0.0.4.
///
/// Not swift-prometheus: its histograms take a lock per observation and its counters
/// are shared atomics every worker would contend on, while DESIGN §1 keeps the request
/// path lock-free; per-worker shards also need a merge step its registry does not have.
public final class MetricsRegistry: Sendable {
    private let shards = Mutex<[MetricsShard]>([])
    /// Written under the hub's lock (drops) or by the main thread (reloads) only.
    let reloadsOK = Cell()
    let reloadsFailed = Cell()
    let eventDrops = Cell()
    /// Written by any worker, so a real read-modify-write.
    let eventEvictions = Atomic<UInt64>(0)
    let eventSubscribers = Atomic<Int>(0)
    /// Set under the failure store's lock.
    let failureEvidence = Atomic<Int>(0)
    let failureEvidenceBytes = Atomic<Int>(0)
    let acceptPausesConnections = Atomic<UInt64>(0)
    let acceptPausesDescriptors = Atomic<UInt64>(0)
    /// The server's connection and buffer budget, read at scrape time.
    private let budget = Mutex<ProcessBudget?>(nil)
    /// The response cache's entries and bytes, read at scrape time.
    private let cacheTotals = Mutex<(@Sendable () -> (entries: Int, bytes: Int))?>(nil)
    let version: String
    let startTime: Double

    /// `startTime`: wall-clock seconds since the epoch at process start.
    public init(version: String, startTime: Double) {
        self.version = version
        self.startTime = startTime
    }

    /// A recorder for one worker's thread, backed by a new shard.
    public func makeRecorder() -> MetricsRecorder {
        let shard = MetricsShard()
        shards.withLock { $0.append(shard) }
        return MetricsRecorder(shard: shard)
    }

    public func attach(_ budget: ProcessBudget) {
        self.budget.withLock { $0 = budget }
    }

    public func attachCache(_ totals: @escaping @Sendable () -> (entries: Int, bytes: Int)) {
        cacheTotals.withLock { $0 = totals }
    }

    /// Cache requests by route and result, summed over workers (`/-/cache`).
    public func cacheCounts() -> [String: [String: UInt64]] { countsByRoute(\.cache, labels: RouteCells.cacheResults) }

    /// Upstream exchanges by route and HTTP version, summed over workers.
    func upstreamVersions() -> [String: [String: UInt64]] { countsByRoute(\.upstreamRequests, labels: RouteCells.httpVersions) }

    /// What network conditions did, by route and kind, summed over workers.
    public func faultCounts() -> [String: [String: UInt64]] { countsByRoute(\.faults, labels: RouteCells.faultKinds) }

    /// A route's labelled counters (one cell per label) summed over workers; labels never
    /// counted are left out.
    private func countsByRoute(_ cells: KeyPath<RouteCells, [Cell]>, labels: [String]) -> [String: [String: UInt64]] {
        var counts: [String: [String: UInt64]] = [:]
        for shard in shards.withLock({ $0 }) {
            for (route, routeCells) in shard.tables.withLock({ $0.routes }) {
                for (at, label) in labels.enumerated() where routeCells[keyPath: cells][at].value > 0 {
                    counts[route, default: [:]][label, default: 0] += routeCells[keyPath: cells][at].value
                }
            }
        }
        return counts
    }

    /// A worker stopped accepting (connection cap, or no descriptors left): once per episode.
    public func countAcceptPause(descriptors: Bool) {
        if descriptors {
            acceptPausesDescriptors.add(1, ordering: .relaxed)
        } else {
            acceptPausesConnections.add(1, ordering: .relaxed)
        }
    }

    /// Called on the main thread after each SIGHUP.
    public func countReload(succeeded: Bool) {
        (succeeded ? reloadsOK : reloadsFailed).add(1)
    }

    /// Prometheus exposition text, every family with HELP and TYPE.
    public func render() -> [UInt8] {
        var requests: [RequestSeries: UInt64] = [:]
        var requestDuration: [String: HistogramSnapshot] = [:]
        var upstreamDuration: [String: HistogramSnapshot] = [:]
        var serialization: [SerializerSeries: HistogramSnapshot] = [:]
        var upstreamBytes: [String: UInt64] = [:]
        var responseBytes: [String: UInt64] = [:]
        var unsafeNumbers: [String: UInt64] = [:]
        var contractViolations: [String: UInt64] = [:]
        var inflight: UInt64 = 0
        for shard in shards.withLock({ $0 }) {
            let tables = shard.tables.withLock { $0 }
            for (series, cell) in tables.requests { requests[series, default: 0] += cell.value }
            for (route, cells) in tables.routes {
                requestDuration[route, default: HistogramSnapshot()].add(cells.requestDuration)
                upstreamDuration[route, default: HistogramSnapshot()].add(cells.upstreamDuration)
                upstreamBytes[route, default: 0] += cells.upstreamBytes.value
                responseBytes[route, default: 0] += cells.responseBytes.value
                unsafeNumbers[route, default: 0] += cells.unsafeNumbers.value
                contractViolations[route, default: 0] += cells.contractViolations.value
            }
            for (series, cells) in tables.serialization { serialization[series, default: HistogramSnapshot()].add(cells) }
            inflight &+= shard.inflight.value
        }

        var out = PrometheusText()
        out.family("serializerd_requests_total", "counter", "Requests answered, by route, method, status sent and outcome.")
        for (series, value) in requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.code, $0.key.outcome) < ($1.key.route, $1.key.method, $1.key.code, $1.key.outcome) }) {
            out.sample("serializerd_requests_total", [("route", series.route), ("method", series.method), ("code", String(series.code)), ("outcome", series.outcome)], value)
        }
        out.family("serializerd_request_duration_seconds", "histogram", "Time from reading the request to queueing the reply.")
        for (route, histogram) in requestDuration.sorted(by: { $0.key < $1.key }) {
            out.histogram("serializerd_request_duration_seconds", [("route", route)], histogram)
        }
        out.family("serializerd_upstream_duration_seconds", "histogram", "Time the upstream transfer took, redirects included.")
        for (route, histogram) in upstreamDuration.sorted(by: { $0.key < $1.key }) where histogram.count > 0 {
            out.histogram("serializerd_upstream_duration_seconds", [("route", route)], histogram)
        }
        out.family("serializerd_serialization_duration_seconds", "histogram", "Time the response serializer took to validate and transcode.")
        for (series, histogram) in serialization.sorted(by: { ($0.key.route, $0.key.serializer) < ($1.key.route, $1.key.serializer) }) {
            out.histogram("serializerd_serialization_duration_seconds", [("route", series.route), ("serializer", series.serializer)], histogram)
        }
        out.family("serializerd_upstream_response_bytes_total", "counter", "Upstream response body bytes received.")
        for (route, value) in upstreamBytes.sorted(by: { $0.key < $1.key }) {
            out.sample("serializerd_upstream_response_bytes_total", [("route", route)], value)
        }
        out.family("serializerd_response_bytes_total", "counter", "Response body bytes sent to clients.")
        for (route, value) in responseBytes.sorted(by: { $0.key < $1.key }) {
            out.sample("serializerd_response_bytes_total", [("route", route)], value)
        }
        out.family("serializerd_unsafe_numbers_total", "counter",
                   "Numbers in upstream payloads that no IEEE 754 double holds exactly (kept, stringified or refused per output.numbers).")
        for (route, value) in unsafeNumbers.sorted(by: { $0.key < $1.key }) where route != RouteLabel.admin && route != RouteLabel.unmatched {
            out.sample("serializerd_unsafe_numbers_total", [("route", route)], value)
        }
        out.family("serializerd_contract_violations_total", "counter", "Answers that broke their route's contract (reported or enforced).")
        for (route, value) in contractViolations.sorted(by: { $0.key < $1.key }) where route != RouteLabel.admin && route != RouteLabel.unmatched {
            out.sample("serializerd_contract_violations_total", [("route", route)], value)
        }
        out.family("serializerd_upstream_requests_total", "counter", "Upstream exchanges answered, by route and the HTTP version they used.")
        for (route, versions) in upstreamVersions().sorted(by: { $0.key < $1.key }) {
            for version in RouteCells.httpVersions where versions[version] != nil {
                out.sample("serializerd_upstream_requests_total", [("route", route), ("http_version", version)], versions[version] ?? 0)
            }
        }
        out.family("serializerd_cache_requests_total", "counter", "Requests of caching routes, by how the cache met them.")
        for (route, results) in cacheCounts().sorted(by: { $0.key < $1.key }) {
            for result in RouteCells.cacheResults {
                out.sample("serializerd_cache_requests_total", [("route", route), ("result", result)], results[result] ?? 0)
            }
        }
        var openStreams: [String: [String: UInt64]] = [:], streamEvents: [String: [String: UInt64]] = [:]
        for shard in shards.withLock({ $0 }) {
            for (route, cells) in shard.tables.withLock({ $0.routes }) {
                for (k, kind) in RouteCells.streamKinds.enumerated() {
                    let results = RouteCells.streamResults.count
                    let counted = (0..<results).map { cells.streamEvents[k * results + $0].value }
                    guard cells.openStreams[k].value > 0 || counted.contains(where: { $0 > 0 }) || openStreams[route]?[kind] != nil else { continue }
                    openStreams[route, default: [:]][kind, default: 0] &+= cells.openStreams[k].value
                    for (r, result) in RouteCells.streamResults.enumerated() {
                        streamEvents[route, default: [:]][kind + "\u{0}" + result, default: 0] &+= counted[r]
                    }
                }
            }
        }
        out.family("serializerd_open_streams", "gauge", "SSE, NDJSON and byte streams and WebSockets being served now, by route and kind.")
        for (route, kinds) in openStreams.sorted(by: { $0.key < $1.key }) {
            for kind in RouteCells.streamKinds where kinds[kind] != nil {
                out.sample("serializerd_open_streams", [("route", route), ("kind", kind)], kinds[kind] ?? 0)
            }
        }
        out.family("serializerd_stream_events_total", "counter",
                   "Stream events and records by route, kind and result: ok (sentinels included), invalid (refused by the serializer), dropped.")
        for (route, counts) in streamEvents.sorted(by: { $0.key < $1.key }) {
            for kind in RouteCells.streamKinds {
                for result in RouteCells.streamResults {
                    guard let value = counts[kind + "\u{0}" + result] else { continue }
                    out.sample("serializerd_stream_events_total", [("route", route), ("kind", kind), ("result", result)], value)
                }
            }
        }
        out.family("serializerd_websocket_messages_total", "counter", "WebSocket messages relayed, by route and direction.")
        for (route, counts) in countsByRoute(\.webSocketMessages, labels: RouteCells.webSocketDirections).sorted(by: { $0.key < $1.key })
        where counts.values.contains(where: { $0 > 0 }) {
            for direction in RouteCells.webSocketDirections {
                out.sample("serializerd_websocket_messages_total", [("route", route), ("direction", direction)], counts[direction] ?? 0)
            }
        }
        out.family("serializerd_faults_total", "counter", "Requests shaped, faulted or damaged by network conditions, by route and kind.")
        for (route, kinds) in faultCounts().sorted(by: { $0.key < $1.key }) {
            for kind in RouteCells.faultKinds where kinds[kind] != nil {
                out.sample("serializerd_faults_total", [("route", route), ("fault", kind)], kinds[kind] ?? 0)
            }
        }
        if let totals = cacheTotals.withLock({ $0 })?() {
            out.family("serializerd_cache_entries", "gauge", "Responses in the cache (each variant counts).")
            out.sample("serializerd_cache_entries", [], UInt64(max(0, totals.entries)))
            out.family("serializerd_cache_bytes", "gauge", "Bytes the cache holds (bodies, fields and a fixed allowance per entry; cache.max_bytes).")
            out.sample("serializerd_cache_bytes", [], UInt64(max(0, totals.bytes)))
        }
        out.family("serializerd_inflight_requests", "gauge", "Requests waiting on an upstream right now.")
        out.sample("serializerd_inflight_requests", [], inflight)
        out.family("serializerd_config_reloads_total", "counter", "Configuration reloads (SIGHUP), by result.")
        out.sample("serializerd_config_reloads_total", [("result", "error")], reloadsFailed.value)
        out.sample("serializerd_config_reloads_total", [("result", "ok")], reloadsOK.value)
        out.family("serializerd_event_subscribers", "gauge", "Clients connected to /-/events.")
        out.sample("serializerd_event_subscribers", [], UInt64(max(0, eventSubscribers.load(ordering: .relaxed))))
        out.family("serializerd_event_drops_total", "counter", "Completion events a slow /-/events subscriber did not receive.")
        out.sample("serializerd_event_drops_total", [], eventDrops.value)
        out.family("serializerd_event_evictions_total", "counter", "/-/events subscribers disconnected for falling too far behind.")
        out.sample("serializerd_event_evictions_total", [], eventEvictions.load(ordering: .relaxed))
        out.family("serializerd_failure_evidence", "gauge", "Failed requests whose upstream response is kept for /-/failures.")
        out.sample("serializerd_failure_evidence", [], UInt64(max(0, failureEvidence.load(ordering: .relaxed))))
        out.family("serializerd_failure_evidence_bytes", "gauge", "Bytes the kept failure evidence holds (bodies up to 256 KiB, 100 at most).")
        out.sample("serializerd_failure_evidence_bytes", [], UInt64(max(0, failureEvidenceBytes.load(ordering: .relaxed))))
        if let budget = budget.withLock({ $0 }) {
            out.family("serializerd_open_connections", "gauge", "Client connections open now (limits.max_connections).")
            out.sample("serializerd_open_connections", [], UInt64(max(0, budget.openConnections)))
            out.family("serializerd_buffered_bytes", "gauge", "Upstream bodies and unsent reply bytes held now (limits.max_buffered_bytes).")
            out.sample("serializerd_buffered_bytes", [], UInt64(max(0, budget.bufferedBytes)))
        }
        out.family("serializerd_accept_pauses_total", "counter", "Times a worker stopped accepting connections, by reason.")
        out.sample("serializerd_accept_pauses_total", [("reason", "descriptors")], acceptPausesDescriptors.load(ordering: .relaxed))
        out.sample("serializerd_accept_pauses_total", [("reason", "max_connections")], acceptPausesConnections.load(ordering: .relaxed))
        out.family("serializerd_build_info", "gauge", "Always 1; the version is in the label.")
        out.sample("serializerd_build_info", [("version", version)], UInt64(1))
        ProcessMetrics.read(startTime: startTime).render(into: &out)
        return out.bytes
    }
}
