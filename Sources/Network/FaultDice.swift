/// The draws behind faults and jitter: SplitMix64, so that a `seed` replays the same
/// sequence (one generator per route and worker).
public struct FaultDice: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// The fault for the next request, if it gets one.
    public mutating func fault(_ settings: NetworkSettings) -> Fault? {
        guard settings.failRate > 0, !settings.faults.isEmpty else { return nil }
        guard unit() < settings.failRate else { return nil }
        return settings.faults[Int(next() % UInt64(settings.faults.count))]
    }

    /// `latency` moved by up to `jitter` either way, never below zero.
    public mutating func latency(_ latency: Double, jitter: Double) -> Double {
        guard jitter > 0 else { return latency }
        return max(0, latency + jitter * (2 * unit() - 1))
    }
}
