/// Histogram buckets for every latency family: sub-millisecond (a cached upstream on
/// loopback) to multi-second (a slow API), at most 15 series per label set.
public enum LatencyBuckets {
    public static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
}
