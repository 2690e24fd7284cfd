/// Per-route cells, registered once per route per worker.
final class RouteCells: Sendable {
    let requestDuration = HistogramCells()
    let upstreamDuration = HistogramCells()
    let upstreamBytes = Cell()
    let responseBytes = Cell()
    let unsafeNumbers = Cell()
    /// `serializerd_cache_requests_total`, one cell per result in `cacheResults` order.
    let cache = (0..<RouteCells.cacheResults.count).map { _ in Cell() }

    static let cacheResults = ["hit", "miss", "stale", "revalidated", "collapsed", "bypass"]
    /// `serializerd_upstream_requests_total`, one cell per version in `httpVersions` order.
    let upstreamRequests = (0..<RouteCells.httpVersions.count).map { _ in Cell() }

    static let httpVersions = ["1.0", "1.1", "2", "3"]
}
