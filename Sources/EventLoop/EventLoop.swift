internal import CLibevent
#if canImport(Glibc)
import Glibc
#endif

/// One libevent `event_base`, owned by one thread. Loop-owned objects are deliberately
/// not `Sendable`: nothing here may be touched from another thread.
public final class EventLoop {
    let base: OpaquePointer

    public init() throws(EventLoopError) {
        // The changelist folds the add/del/add of one fd within a loop turn (evhttp and
        // curl both toggle interest per request) into at most one epoll_ctl. Its one
        // caveat, dup'ed fds in the same base, does not arise: each base owns its fds.
        guard let config = event_config_new() else { throw EventLoopError("event_config_new failed") }
        defer { event_config_free(config) }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else { throw EventLoopError("event_base_new failed") }
        self.base = base
    }

    /// Runs until `exit` is called or nothing is left to wait for.
    public func run() {
        event_base_dispatch(base)
    }

    /// Stops the loop after `seconds` (0 = after this turn), letting pending writes flush.
    public func exit(after seconds: Double = 0) {
        var tv = timeval(seconds: seconds)
        event_base_loopexit(base, &tv)
    }

    /// Frees the base. Every `Watch`/`Timer` must be cancelled first.
    public func close() {
        event_base_free(base)
    }

    public func makeTimer(repeating: Bool = false, _ fire: @escaping () -> Void) -> Timer {
        Timer(loop: self, repeating: repeating, fire)
    }

    /// Watches `fd` persistently (EV_PERSIST); the handler gets (readable, writable).
    public func watch(fd: Int32, read: Bool, write: Bool, _ fire: @escaping (Bool, Bool) -> Void) -> Watch {
        Watch(loop: self, fd: fd, flags: Watch.flags(read: read, write: write), fire)
    }

    /// Runs `fire` on this loop whenever `signal` arrives (libevent's self-pipe).
    public func onSignal(_ signal: Int32, _ fire: @escaping () -> Void) -> Watch {
        Watch(loop: self, fd: signal, flags: Int16(EV_SIGNAL | EV_PERSIST)) { _, _ in fire() }
    }
}

public struct EventLoopError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension timeval {
    init(seconds: Double) {
        let whole = max(0, seconds).rounded(.down)
        self.init(tv_sec: Int(whole), tv_usec: Int((max(0, seconds) - whole) * 1_000_000))
    }
}
