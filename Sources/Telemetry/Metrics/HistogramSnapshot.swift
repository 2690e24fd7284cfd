import HTTPCore
import Synchronization

/// Histogram values summed over workers.
struct HistogramSnapshot {
    var buckets = [UInt64](repeating: 0, count: LatencyBuckets.bounds.count + 1)
    var count: UInt64 = 0
    var sum: Double = 0

    mutating func add(_ cells: HistogramCells) {
        for index in buckets.indices { buckets[index] &+= cells.buckets[index].value }
        count &+= cells.count.value
        sum += cells.sum.doubleValue
    }
}
