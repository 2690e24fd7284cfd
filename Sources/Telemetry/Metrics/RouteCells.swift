/// Per-route cells, registered once per route per worker.
final class RouteCells: Sendable {
    let requestDuration = HistogramCells()
    let upstreamDuration = HistogramCells()
    let upstreamBytes = Cell()
    let responseBytes = Cell()
    let unsafeNumbers = Cell()
    /// `serializerd_contract_violations_total`: answers that broke the route's contract.
    let contractViolations = Cell()
    /// `serializerd_cache_requests_total`, one cell per result in `cacheResults` order.
    let cache = (0..<RouteCells.cacheResults.count).map { _ in Cell() }

    static let cacheResults = ["hit", "miss", "stale", "revalidated", "collapsed", "bypass"]
    /// `serializerd_upstream_requests_total`, one cell per version in `httpVersions` order.
    let upstreamRequests = (0..<RouteCells.httpVersions.count).map { _ in Cell() }

    static let httpVersions = ["1.0", "1.1", "2", "3"]
    /// `serializerd_faults_total`, one cell per kind in `faultKinds` order.
    let faults = (0..<RouteCells.faultKinds.count).map { _ in Cell() }

    /// `serializerd_open_streams`, one gauge per kind in `streamKinds` order (its worker
    /// opens and closes each, so the cell never goes below zero).
    let openStreams = (0..<RouteCells.streamKinds.count).map { _ in Cell() }
    /// `serializerd_stream_events_total`, one cell per kind and result: `streamKinds` ×
    /// `streamResults`, kind-major.
    let streamEvents = (0..<RouteCells.streamKinds.count * RouteCells.streamResults.count).map { _ in Cell() }

    static let streamKinds = ["sse", "ndjson", "bytes", "websocket"]
    /// `serializerd_websocket_messages_total`, one cell per direction in `webSocketDirections` order.
    let webSocketMessages = (0..<RouteCells.webSocketDirections.count).map { _ in Cell() }

    static let webSocketDirections = ["to_client", "to_upstream"]
    static let streamResults = ["ok", "invalid", "dropped"]

    /// What network conditions did to requests: shaped them, replaced their exchange, or
    /// damaged the answer (`chaos`); `ignored_header` counts fault headers not honoured.
    static let faultKinds = ["latency", "down", "up", "reset", "timeout", "truncate", "status", "chaos", "ignored_header"]

    /// The kind of one entry of `Serializerd-Fault-Applied` (`latency=800ms` → latency,
    /// `drop=/a` → chaos).
    static func faultKind(_ applied: Substring) -> String {
        let name = applied.prefix { $0 != "=" }
        switch name {
        case "latency", "down", "up", "reset", "timeout", "truncate", "status": return String(name)
        default: return "chaos"
        }
    }
}
