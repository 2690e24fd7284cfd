/// Named network conditions a route's `network.profile` starts from; keys set beside
/// the profile override it. The 3G figures are Chrome DevTools' presets; `3g` and `edge`
/// follow Apple's Network Link Conditioner (its two delays added into one latency).
public enum NetworkProfile: String, CaseIterable, Sendable {
    case slow3G = "slow-3g"
    case fast3G = "fast-3g"
    case threeG = "3g"
    case edge
    case lossyWifi = "lossy-wifi"

    public var settings: NetworkSettings {
        var s = NetworkSettings()
        switch self {
        case .slow3G:
            s.latency = 2.0
            s.down = 50 << 10
            s.up = 50 << 10
        case .fast3G:
            s.latency = 0.563
            s.down = 200 << 10
            s.up = 94 << 10
        case .threeG:
            s.latency = 0.2
            s.down = 97_500
            s.up = 41_250
        case .edge:
            s.latency = 0.84
            s.down = 30_000
            s.up = 25_000
        case .lossyWifi:
            s.latency = 0.04
            s.jitter = 0.02
            s.down = 2 << 20
            s.failRate = 0.02
            s.faults = [.reset]
        }
        return s
    }
}
