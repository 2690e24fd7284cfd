/// A histogram with one writer: per-bucket counts (made cumulative when rendered), the
/// count and the sum of observations.
final class HistogramCells: Sendable {
    let buckets: [Cell] = (0...LatencyBuckets.bounds.count).map { _ in Cell() }   // the last is +Inf
    let count = Cell()
    let sum = Cell()

    @inline(__always) func observe(_ seconds: Double) {
        var index = 0
        let bounds = LatencyBuckets.bounds
        while index < bounds.count && seconds > bounds[index] { index += 1 }
        buckets[index].add(1)
        count.add(1)
        sum.addDouble(seconds)
    }
}
