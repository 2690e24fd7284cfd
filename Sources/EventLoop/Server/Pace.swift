/// The arithmetic of one shaped reply (or one request body read at a pace): when its
/// bytes may move, how many, and when to give up. A value the connection machine owns:
/// tested with plain times, no timer; the connection's `PaceTimer` wakes it.
struct Pace: Equatable {
    /// Monotonic time of the first byte.
    let start: Double
    let rate: Int?
    let ending: ReplyShaping.Ending
    /// Bytes sent (or read) so far.
    var sent = 0
    /// Past this, the connection closes.
    let giveUpAt: Double

    init(_ shaping: ReplyShaping, now: Double) {
        start = now + shaping.delay
        rate = shaping.bytesPerSecond
        ending = shaping.ending
        giveUpAt = start + ReplyShaping.maxSeconds
    }

    /// At most this many bytes leave in one step: about 50 steps a second.
    var chunk: Int { rate.map { min(max($0 / 50, 1), 256 << 10) } ?? Int.max }

    /// How many bytes may leave now; 0 means wait.
    func allowance(now: Double) -> Int {
        guard now >= start else { return 0 }
        guard let rate else { return Int.max }
        let earned = Int(min((now - start) * Double(rate), Double(Int.max >> 1)))
        return max(0, earned + chunk - sent)
    }

    /// Seconds until the next chunk may leave.
    func wait(now: Double) -> Double {
        if now < start { return start - now }
        guard let rate else { return 0 }
        return max(0, start + Double(sent) / Double(rate) - now)
    }

    /// Seconds until a body of `bytes` would have arrived at this pace (0 when it is due).
    func due(bytes: Int, now: Double) -> Double {
        max(0, start + Double(bytes) / Double(rate ?? 1) - now)
    }
}
