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

    public init() {}

    /// The tape at `path` with these settings: the one already open, reconfigured, else
    /// read from the file (an empty tape when there is none). `keeps`: a route replays
    /// from it (it holds its entries; a tape only recorded to lets them go once written).
    public func tape(path: String, match: TapeMatch, redaction: Redaction, keeps: Bool = true) throws(HARError) -> Tape {
        // The open tape, unless another process changed the file since (`tape import`).
        if let open = tapes.withLock({ $0[path] }), open.isCurrent(with: FileStamp(path)) {
            if open.configure(match: match, redaction: redaction, keeps: keeps) { return open }
            // It let its entries go: what is pending written, then the file read back.
            if let failure = write(open, force: true) { throw HARError(failure) }
            let file = try TapeFile.read(path)
            open.hold(try file.map { (bytes) throws(HARError) in try HARCodec.decode(bytes) } ?? [], match: match, redaction: redaction)
            return open
        }
        let stamp = FileStamp(path)
        let file = try TapeFile.read(path)
        let decoded = try file.map { (bytes) throws(HARError) in try HARCodec.decodeFile(bytes) }
        let tape = Tape(path: path, entries: decoded?.entries ?? [], match: match, redaction: redaction, fileBytes: file?.count ?? 0,
                        stamp: stamp, keeps: keeps, appendable: decoded?.appendable ?? false, skipped: decoded?.skipped ?? 0,
                        wakeWriter: { [wake] in wake.signal() })
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

    /// Writes every tape with unwritten recordings now (at shutdown, and for `tape
    /// import`); the failures, in words.
    @discardableResult
    public func flush() -> [String] { write(force: true) }

    /// Writes the tapes due (all with unwritten recordings when `force`).
    func write(force: Bool) -> [String] {
        let all = tapes.withLock { Array($0.values) }
        return writing.withLock { _ in
            var failures: [String] = []
            for tape in all {
                if let full = tape.takeNewlyStopped() {
                    logger.withLock { $0 }?.warning("tape_full", metadata: ["tape": "\(tape.path)", "reason": "\(full)",
                                                                           "effect": "recording to this tape stopped; forwarding goes on"])
                }
                if let failure = write(tape, force: force) { failures.append(failure) }
            }
            return failures
        }
    }

    /// Writes one tape if due (or anything unwritten, when `force`); the failure, logged.
    func write(_ tape: Tape, force: Bool) -> String? {
        let failure: String? = tape.io.withLock { _ in
            guard let work = tape.takeWrite(force: force, now: Clock.now()) else { return nil }
            switch work {
            case .whole(let held, let encoded):
                let pieces = Tape.pieces(held.map(HARCodec.encode) + encoded)
                if let failure = TapeFile.write(pieces, to: tape.path) { return failure }
                tape.wrote(onDisk: held.count + encoded.count, fileBytes: pieces.reduce(0) { $0 + $1.count })
            case .append(let encoded, let onDisk, let stamp):
                let disk = FileStamp(tape.path)
                guard disk == stamp else {
                    // Another process replaced or removed the file since: its entries (if
                    // any) are kept, and the new ones follow them in a whole new file.
                    let before: [TapeEntry]
                    do throws(HARError) {
                        before = try TapeFile.read(tape.path).map { (bytes) throws(HARError) in try HARCodec.decode(bytes) } ?? []
                    } catch {
                        return "\(tape.path) was changed by another process and cannot be read back (\(error.message)); serializerd does not replace it"
                    }
                    let pieces = Tape.pieces(before.map(HARCodec.encode) + encoded)
                    if let failure = TapeFile.write(pieces, to: tape.path) { return failure }
                    tape.wrote(onDisk: before.count + encoded.count, fileBytes: pieces.reduce(0) { $0 + $1.count })
                    return nil
                }
                let keep = Int(stamp.size) - HARCodec.tail.count
                let pieces = Tape.appended(encoded, onDisk: onDisk)
                if let failure = TapeFile.write(pieces, to: tape.path, keeping: (keep, stamp)) { return failure }
                tape.wrote(onDisk: onDisk + encoded.count, fileBytes: keep + pieces.reduce(0) { $0 + $1.count })
            }
            return nil
        }
        if let failure {
            tape.stop(failure)
            logger.withLock { $0 }?.error("tape_write_failed", metadata: ["tape": "\(tape.path)", "error": "\(failure)",
                                                                        "effect": "recording to this tape stopped; forwarding goes on"])
        }
        return failure
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
