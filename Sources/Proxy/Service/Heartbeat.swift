import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A worker's proof of life for the systemd watchdog: the worker's own loop bumps it on
/// a timer, and the main loop pings systemd only while every worker's count moves — so a
/// wedged worker loop, not just a wedged main loop, gets the daemon restarted.
final class Heartbeat: Sendable {
    let interval: Double
    private let beats = Atomic<UInt64>(0)

    init(interval: Double) { self.interval = interval }

    func beat() { beats.add(1, ordering: .relaxed) }

    var count: UInt64 { beats.load(ordering: .relaxed) }
}

/// Each worker reports once that it is serving (or failed to start), so READY=1 means
/// every worker accepts. A pipe keeps the main thread's wait free of busy loops.
final class StartupReport: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func report(ok: Bool) {
        var byte: UInt8 = ok ? 1 : 0
        _ = write(writeEnd, &byte, 1)
    }

    /// Blocks until `count` workers reported; true when all of them started.
    func waitForAll(_ count: Int) -> Bool {
        var allOK = true
        for _ in 0..<count {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
            allOK = allOK && byte == 1
        }
        return allOK
    }
}
