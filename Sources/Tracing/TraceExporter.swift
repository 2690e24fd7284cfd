import HTTPCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a batch goes: OTLP/HTTP's endpoint, one POST of a JSON body. Returns whether the
/// collector took it (a 2xx within `timeout` seconds).
public protocol SpanSender: Sendable {
    func send(_ body: [UInt8], to url: String, timeout: Double) -> Bool
}

/// Nowhere to send: every batch is refused (and its spans counted as dropped).
public struct NoSpanSender: SpanSender {
    public init() {}
    public func send(_ body: [UInt8], to url: String, timeout: Double) -> Bool { false }
}

/// What `tracing:` says the exporter does (DESIGN §12).
public struct ExportSettings: Sendable, Equatable {
    public var url: String
    public var serviceName: String

    public init(url: String, serviceName: String) {
        self.url = url
        self.serviceName = serviceName
    }
}

/// Spans from every worker to the collector (DESIGN §12): workers hand finished traces to a
/// bounded queue (a lock held for an append); a thread of its own batches them, every
/// second or at 512 spans, and sends each batch once. A collector that is down or slow
/// holds only that thread: past `capacity` spans waiting, traces are dropped and counted.
public final class TraceExporter: Sendable {
    public static let batchSpans = 512
    public static let capacity = 8192
    public static let interval = 1.0
    public static let sendTimeout = 10.0
    /// At shutdown, the most one batch may take.
    public static let stopTimeout = 2.0

    private struct Queue {
        var traces: [TraceSpans] = []
        var spans = 0
        var settings: ExportSettings?
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let wake = Wake()
    private let sender: any SpanSender
    private let version: String
    private let capacity: Int
    private let exportedCount = Atomic<UInt64>(0)
    private let droppedCount = Atomic<UInt64>(0)
    private let thread = Mutex<pthread_t?>(nil)

    public init(sender: any SpanSender, version: String, capacity: Int = TraceExporter.capacity) {
        self.sender = sender
        self.version = version
        self.capacity = capacity
    }

    /// Spans the collector took, and spans dropped (the queue full, or a batch the
    /// collector refused or did not answer in time).
    public var exported: UInt64 { exportedCount.load(ordering: .relaxed) }
    public var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }

    /// A load's or a reload's settings; nil stops exporting: new spans are dropped, and what
    /// already waits (at most `capacity`) goes when tracing is on again.
    /// The thread starts the first time there is somewhere to send.
    public func apply(_ settings: ExportSettings?) {
        queue.withLock { $0.settings = settings }
        guard settings != nil else { return }
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = JoinableThread.spawn { [self] in run() }
        }
    }

    /// A worker's finished trace: queued, or dropped when `capacity` spans already wait.
    public func submit(_ trace: TraceSpans) {
        let count = trace.count
        let (taken, full) = queue.withLock { q -> (Bool, Bool) in
            guard q.settings != nil, !q.stopping, q.spans + count <= capacity else { return (false, false) }
            q.traces.append(trace)
            q.spans += count
            return (true, q.spans >= Self.batchSpans && q.spans - count < Self.batchSpans)
        }
        if !taken { droppedCount.add(UInt64(count), ordering: .relaxed); return }
        if full { wake.signal() }
    }

    /// Shutdown: what waits goes in one last round of batches (each within `timeout`),
    /// then the thread ends.
    public func stop() {
        queue.withLock { $0.stopping = true }
        wake.signal()
        if let running = thread.withLock({ thread -> pthread_t? in defer { thread = nil }; return thread }) { pthread_join(running, nil) }
    }

    private func run() {
        while true {
            if !queue.withLock({ $0.stopping }) { wake.wait(seconds: Self.interval) }
            let last = queue.withLock { $0.stopping }
            var failed = false, first = true
            // Woken by a full batch or the interval: that batch, then only full ones (under
            // load, draining what came during each send would POST many small batches).
            while let (batch, settings) = take(full: !first && !last) {
                first = false
                // Stopping: one collector that does not answer is not waited for again.
                if last && failed {
                    droppedCount.add(UInt64(batch.reduce(0) { $0 + $1.count }), ordering: .relaxed)
                    continue
                }
                failed = !send(batch, settings, timeout: last ? Self.stopTimeout : Self.sendTimeout)
            }
            if last { return }
        }
    }

    /// The oldest traces, up to `batchSpans` spans (a trace is never split), and where they
    /// go; with `full`, only when `batchSpans` spans wait.
    private func take(full: Bool) -> (ArraySlice<TraceSpans>, ExportSettings)? {
        queue.withLock { q in
            guard let settings = q.settings, !q.traces.isEmpty, !full || q.spans >= Self.batchSpans else { return nil }
            var spans = 0, n = 0
            while n < q.traces.count, n == 0 || spans + q.traces[n].count <= Self.batchSpans {
                spans += q.traces[n].count
                n += 1
            }
            let batch = q.traces[..<n]
            q.traces.removeFirst(n)
            q.spans -= spans
            return (batch, settings)
        }
    }

    private func send(_ batch: ArraySlice<TraceSpans>, _ settings: ExportSettings, timeout: Double) -> Bool {
        let spans = batch.reduce(0) { $0 + $1.count }
        let body = OTLPJSON.encode(batch, serviceName: settings.serviceName, version: version)
        let taken = sender.send(body, to: settings.url, timeout: timeout)
        if taken { exportedCount.add(UInt64(spans), ordering: .relaxed) } else { droppedCount.add(UInt64(spans), ordering: .relaxed) }
        return taken
    }
}

/// A wake-up the exporter's thread waits for, at most some seconds (monotonic clock).
private final class Wake: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var signalled = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        cond.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    func wait(seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let whole = Int(seconds)
        deadline.tv_sec += whole
        deadline.tv_nsec += Int((seconds - Double(whole)) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
        pthread_mutex_lock(mutex)
        while !signalled {
            if pthread_cond_timedwait(cond, mutex, &deadline) != 0 { break }
        }
        signalled = false
        pthread_mutex_unlock(mutex)
    }
}
