import HTTPCore
import Logging
import Synchronization
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

/// Every tape of the process, by file: a reload hands a route the tape it already had
/// (recordings not yet written included), and one writer thread writes recorded tapes,
/// at most every `interval` seconds each, so recording costs a request no I/O.
public final class TapeStore: Sendable {
    public static let shared = TapeStore()
    /// The largest tape file serializerd reads.
    public static let maxFileBytes = TapeFile.maxBytes

    /// `entries` as the whole HAR file at `path` (temporary file and rename, 0600).
    public static func rewrite(_ path: String, entries: [TapeEntry]) -> String? {
        TapeFile.write(Tape.pieces(entries.map(HARCodec.encode)), to: path)
    }

    /// How often a tape being recorded is written out.
    public static let interval = 0.2

    private let tapes = Mutex<[String: Tape]>([:])
    /// Held while a file is written (the writer thread and a final flush never overlap).
    private let writing = Mutex<Void>(())
    private let wake = Wakeup()
    private let logger = Mutex<Logger?>(nil)
    private let started = Mutex(false)

    /// The tape at `path` with these settings: the one already open, reconfigured, else
    /// read from the file (an empty tape when there is none).
    public func tape(path: String, match: TapeMatch, redaction: Redaction) throws(HARError) -> Tape {
        // The open tape, unless another process changed the file since (`tape import`).
        if let open = tapes.withLock({ $0[path] }), open.isCurrent(with: FileStamp(path)) {
            open.configure(match: match, redaction: redaction)
            return open
        }
        let stamp = FileStamp(path)
        let file = try TapeFile.read(path)
        let entries = try file.map { (bytes) throws(HARError) in try HARCodec.decode(bytes) } ?? []
        let tape = Tape(path: path, entries: entries, match: match, redaction: redaction, fileBytes: file?.count ?? 0, stamp: stamp)
        tapes.withLock { $0[path] = tape }
        return tape
    }

    /// Starts the writer thread (once); write failures are logged to `logger`.
    public func start(logger: Logger) {
        self.logger.withLock { $0 = logger }
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        let body = Unmanaged.passRetained(WriterBody { [self] in self.writerLoop() }).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { arg in
            Unmanaged<WriterBody>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, body)
        pthread_detach(thread)
    }

    /// A tape was recorded to: the writer writes it soon.
    public func changed() { wake.signal() }

    /// Writes every tape with unwritten recordings now (at shutdown, and for `tape
    /// import`); the failures, in words.
    @discardableResult
    public func flush() -> [String] { write(force: true) }

    /// Writes the tapes due (all with unwritten recordings when `force`).
    func write(force: Bool) -> [String] {
        let all = tapes.withLock { Array($0.values) }
        let now = Clock.now()
        return writing.withLock { _ in
            var failures: [String] = []
            for tape in all {
                if let full = tape.takeNewlyStopped() {
                    logger.withLock { $0 }?.warning("tape_full", metadata: ["tape": "\(tape.path)", "reason": "\(full)",
                                                                           "effect": "recording to this tape stopped; forwarding goes on"])
                }
                guard let file = tape.takeFile(force: force, now: now) else { continue }
                let failure = TapeFile.write(file, to: tape.path)
                if failure == nil { tape.written(FileStamp(tape.path)) }
                if let failure {
                    tape.stop(failure)
                    failures.append(failure)
                    logger.withLock { $0 }?.error("tape_write_failed", metadata: ["tape": "\(tape.path)", "error": "\(failure)",
                                                                                "effect": "recording to this tape stopped; forwarding goes on"])
                }
            }
            return failures
        }
    }

    private func writerLoop() {
        while true {
            wake.wait()
            // Passes every `interval` while a tape has unwritten recordings; those that
            // arrive meanwhile are written together.
            repeat {
                var pause = timespec(tv_sec: 0, tv_nsec: Int(Self.interval * 1e9)), left = timespec()
                while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                _ = write(force: false)
            } while tapes.withLock({ $0.values.contains { $0.isDirty } })
        }
    }

    final class WriterBody: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}

/// A flag one thread raises and another waits for (a condition variable and its mutex).
final class Wakeup: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var raised = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    func signal() {
        pthread_mutex_lock(mutex)
        raised = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func wait() {
        pthread_mutex_lock(mutex)
        while !raised { pthread_cond_wait(condition, mutex) }
        raised = false
        pthread_mutex_unlock(mutex)
    }
}
