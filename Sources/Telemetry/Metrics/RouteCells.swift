/// Per-route cells, registered once per route per worker.
final class RouteCells: Sendable {
    let requestDuration = HistogramCells()
    let upstreamDuration = HistogramCells()
    let upstreamBytes = Cell()
    let responseBytes = Cell()
    let unsafeNumbers = Cell()
}
