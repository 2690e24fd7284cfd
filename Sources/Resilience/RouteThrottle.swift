import Synchronization

/// What holds a route's upstream requests back before its concurrency gate (DESIGN §11):
/// a pause the upstream asked for, on any route, and `limits.rate`'s bucket. Shared by
/// every worker and kept across reloads by route name. A route that is neither paused nor
/// rate-limited costs one atomic load a request.
public final class RouteThrottle: Sendable {
    /// The pause's end (monotonic seconds) as a Double's bits; 0 when none was asked for.
    private let pausedUntil = Atomic<UInt64>(0)
    private let bucket: Mutex<TokenBucket?>
    private let hasBucket = Atomic<Bool>(false)
    /// Requests parked until their token or the pause's end, all workers together.
    private let delayedCount = Atomic<Int>(0)

    public init(rate: (count: Int, period: Double)? = nil) {
        bucket = Mutex(rate.map { TokenBucket(count: $0.count, period: $0.period) })
        hasBucket.store(rate != nil, ordering: .relaxed)
    }

    /// A reload's `rate`: an unchanged rate keeps its bucket (and the tokens out).
    public func update(rate: (count: Int, period: Double)?) {
        bucket.withLock { current in
            if let rate {
                let fresh = TokenBucket(count: rate.count, period: rate.period)
                if current?.capacity != fresh.capacity || current?.rate != fresh.rate { current = fresh }
            } else {
                current = nil
            }
            hasBucket.store(current != nil, ordering: .relaxed)
        }
    }

    /// True when a request at `now` goes on at once without asking the bucket: no rate,
    /// and no pause still running.
    public func isOpen(at now: Double) -> Bool {
        !hasBucket.load(ordering: .relaxed) && Double(bitPattern: pausedUntil.load(ordering: .relaxed)) <= now
    }

    /// Seconds of the upstream's pause still to run at `now`.
    public func pause(at now: Double) -> Double {
        max(0, Double(bitPattern: pausedUntil.load(ordering: .relaxed)) - now)
    }

    /// The upstream asked for a pause until `until`: true when that extends the one running
    /// (an earlier end never shortens it).
    @discardableResult
    public func pause(until: Double) -> Bool {
        var current = pausedUntil.load(ordering: .relaxed)
        while until > Double(bitPattern: current) {
            let (exchanged, original) = pausedUntil.compareExchange(expected: current, desired: until.bitPattern, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Why a request waits, for `serializerd_rate_limited_total{source}`.
    public enum Holder: String, Sendable {
        case bucket, upstream
    }

    /// How long a request at `now` waits before it may go to the upstream (0: at once),
    /// and what held it; `refused` when that would pass `limit` seconds (nothing taken).
    /// A retry asks with `notBefore`, its backoff's end: what holds it longer is the holder.
    public func admit(now: Double, within limit: Double, notBefore: Double? = nil) -> (grant: TokenBucket.Grant, holder: Holder?) {
        let own = max(0, (notBefore ?? now) - now)
        let paused = pause(at: now)
        if paused > limit { return (.refused(paused), .upstream) }
        let start = max(paused, own)
        guard hasBucket.load(ordering: .relaxed) else { return (.after(start), paused > own ? .upstream : nil) }
        let grant = bucket.withLock { bucket -> TokenBucket.Grant in
            guard var current = bucket else { return .after(start) }
            defer { bucket = current }
            return current.reserve(now: now, start: now + start, within: limit)
        }
        switch grant {
        case .after(let wait) where wait > start: return (grant, .bucket)
        case .refused(let wait) where wait > start: return (grant, .bucket)
        default: return (grant, paused > own ? .upstream : nil)
        }
    }

    /// Requests parked until their turn, all workers together.
    public var delayed: Int { delayedCount.load(ordering: .relaxed) }
    public func delayStarted() { delayedCount.add(1, ordering: .relaxed) }
    public func delayEnded() { delayedCount.subtract(1, ordering: .relaxed) }

    // MARK: counted for /metrics

    private let heldByBucket = Atomic<UInt64>(0)
    private let heldByUpstream = Atomic<UInt64>(0)
    private let waits = Mutex(WaitHistogram())

    /// A request held back (delayed or refused) by the bucket or by the upstream's pause.
    public func held(by holder: Holder) {
        switch holder {
        case .bucket: heldByBucket.add(1, ordering: .relaxed)
        case .upstream: heldByUpstream.add(1, ordering: .relaxed)
        }
    }

    /// Requests held back so far: by the bucket, by the upstream's pauses.
    public var heldCounts: (bucket: UInt64, upstream: UInt64) {
        (heldByBucket.load(ordering: .relaxed), heldByUpstream.load(ordering: .relaxed))
    }

    /// A request's time in the queue (for the pause, its token and a slot), when it left it.
    public func waited(_ seconds: Double) { waits.withLock { $0.observe(seconds) } }

    public var waitHistogram: WaitHistogram { waits.withLock { $0 } }
}

/// `serializerd_queue_wait_seconds`: counts by upper bound, as Prometheus has them.
public struct WaitHistogram: Sendable, Equatable {
    public static let bounds: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    /// Per bound, the waits above the bound before it and at or below it (`count` holds
    /// them all, the ones above the last bound too).
    public private(set) var buckets = [UInt64](repeating: 0, count: bounds.count)
    public private(set) var count: UInt64 = 0
    public private(set) var sum = 0.0

    public init() {}

    mutating func observe(_ seconds: Double) {
        if let at = Self.bounds.firstIndex(where: { seconds <= $0 }) { buckets[at] += 1 }
        count += 1
        sum += seconds
    }
}
