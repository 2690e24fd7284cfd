import Cache
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The only channel into a worker from another thread: commands behind a mutex, and a
/// self-pipe the worker's loop watches. The request path never touches it.
final class Mailbox: Sendable {
    enum Command: Sendable {
        case reload(ServerConfig)
        case shutdown
        /// Live events are waiting for this worker's `/-/events` clients.
        case events
        /// A miss this worker's parked requests wait for is answered.
        case cacheFilled(CacheKey)
        /// A route's gate handed a slot to this worker's queued request (`limits`).
        case gateOpened(UInt64)
    }

    /// The read end, for the worker's loop.
    let fd: Int32
    private let writeEnd: Int32
    private let commands = Mutex<[Command]>([])

    init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fd = ends[0]
        writeEnd = ends[1]
    }

    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        var wake: UInt8 = 1
        _ = write(writeEnd, &wake, 1)
    }

    /// Called on the worker's loop when the pipe is readable.
    func drain() -> [Command] {
        var scratch = [UInt8](repeating: 0, count: 64)
        while scratch.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        return commands.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    deinit {
        close(fd)
        close(writeEnd)
    }
}
