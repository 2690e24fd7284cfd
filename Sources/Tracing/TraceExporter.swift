import HTTPCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a batch goes: OTLP/HTTP's endpoint, one POST of a JSON body. Returns whether the
/// collector took it (a 2xx within `timeout` seconds).
public protocol SpanSender: Sendable {
    func send(_ body: UnsafeBufferPointer<UInt8>, to url: String, timeout: Double) -> Bool
}

/// Nowhere to send: every batch is refused (and its spans counted as dropped).
public struct NoSpanSender: SpanSender {
    public init() {}
    public func send(_ body: UnsafeBufferPointer<UInt8>, to url: String, timeout: Double) -> Bool { false }
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

/// Spans from every worker to the collector (DESIGN §12): each worker writes its spans
/// into a batch of its own (`SpanWriter`) and hands it over full, or after `interval`; a
/// bounded queue (a lock held for an append) keeps the batches, and a thread of its own
/// sends each once. A collector that is down or slow holds only that thread: past
/// `capacity` spans waiting, batches are dropped and their spans counted.
public final class TraceExporter: Sendable {
    public static let batchSpans = 512
    public static let capacity = 8192
    public static let interval = 1.0
    public static let sendTimeout = 10.0
    /// At shutdown, the most one batch may take.
    public static let stopTimeout = 2.0
    /// Room a batch starts with: about what 512 spans take, so that it seldom grows.
    static let batchBytes = 256 * 1024

    private struct Queue {
        var batches: [SpanBatch] = []
        var spans = 0
        var settings: ExportSettings?
        var stopping = false
        /// Batches sent, kept to be written again: a batch's room is allocated once.
        var spare: [SpanBatch] = []
    }
    /// How many sent batches are kept for reuse.
    static let spares = 4

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

    /// Spans the collector took, and spans dropped (the queue full, tracing off, or a batch
    /// the collector refused or did not answer in time).
    public var exported: UInt64 { exportedCount.load(ordering: .relaxed) }
    public var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }

    func countDropped(_ spans: Int) { droppedCount.add(UInt64(spans), ordering: .relaxed) }

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

    /// An empty batch for a worker to write into, named by the settings of now; nil while
    /// there is nowhere to send.
    func openBatch(now: Double) -> SpanBatch? {
        let (name, spare) = queue.withLock { q -> (String?, SpanBatch?) in
            q.stopping || q.settings == nil ? (nil, nil) : (q.settings?.serviceName, q.spare.popLast())
        }
        guard let name else { return nil }
        guard let spare else { return SpanBatch(serviceName: name, version: version, opened: now, capacity: Self.batchBytes) }
        spare.reopen(serviceName: name, version: version, opened: now)
        return spare
    }

    /// A worker's batch: queued, or dropped when `capacity` spans already wait.
    public func submit(_ batch: SpanBatch) {
        let count = batch.count
        let taken = queue.withLock { q -> Bool in
            guard q.settings != nil, !q.stopping, q.spans + count <= capacity else { return false }
            q.batches.append(batch)
            q.spans += count
            return true
        }
        if taken { wake.signal() } else { countDropped(count) }
    }

    /// Shutdown: what waits goes (each batch within `stopTimeout`), then the thread ends.
    public func stop() {
        queue.withLock { $0.stopping = true }
        wake.signal()
        if let running = thread.withLock({ thread -> pthread_t? in defer { thread = nil }; return thread }) { pthread_join(running, nil) }
    }

    private func run() {
        while true {
            if !queue.withLock({ $0.stopping }) { wake.wait(seconds: Self.interval) }
            let last = queue.withLock { $0.stopping }
            var failed = false
            while let (batch, settings) = take() {
                // Stopping: one collector that does not answer is not waited for again.
                if last && failed {
                    countDropped(batch.count)
                    continue
                }
                failed = !send(batch, settings, timeout: last ? Self.stopTimeout : Self.sendTimeout)
            }
            if last { return }
        }
    }

    /// The oldest batch, and where it goes.
    private func take() -> (SpanBatch, ExportSettings)? {
        queue.withLock { q in
            guard let settings = q.settings, !q.batches.isEmpty else { return nil }
            let batch = q.batches.removeFirst()
            q.spans -= batch.count
            return (batch, settings)
        }
    }

    private func send(_ batch: SpanBatch, _ settings: ExportSettings, timeout: Double) -> Bool {
        let taken = batch.withBody { sender.send($0, to: settings.url, timeout: timeout) }
        if taken { exportedCount.add(UInt64(batch.count), ordering: .relaxed) } else { countDropped(batch.count) }
        queue.withLock { if $0.spare.count < Self.spares { $0.spare.append(batch) } }
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
