internal import CLibevent

/// One libevent event owned by a Swift object. libevent holds an unretained pointer to
/// its owner, so `cancel()` must run before the owner is released.
public class LoopEvent {
    fileprivate var event: OpaquePointer?

    /// Removes and frees the event; it never fires again.
    public func cancel() {
        guard let event else { return }
        event_del(event)
        event_free(event)
        self.event = nil
    }
}

/// A persistent event on a descriptor or signal.
public final class Watch: LoopEvent {
    private let fire: (Bool, Bool) -> Void
    private let loop: EventLoop
    private let fd: Int32
    private var flags: Int16

    init(loop: EventLoop, fd: Int32, flags: Int16, _ fire: @escaping (Bool, Bool) -> Void) {
        self.fire = fire
        self.loop = loop
        self.fd = fd
        self.flags = flags
        super.init()
        // Without memory for the event there is nothing to watch: it stays cancelled.
        event = event_new(loop.base, fd, flags, Watch.callback, Unmanaged.passUnretained(self).toOpaque())
        if let event, event_add(event, nil) != 0 { cancel() }
    }

    static func flags(read: Bool, write: Bool) -> Int16 {
        Int16((read ? EV_READ : 0) | (write ? EV_WRITE : 0) | EV_PERSIST)
    }

    /// Changes the watched directions (curl's CURL_POLL_* updates); wakes a paused watch.
    public func set(read: Bool, write: Bool) {
        let wanted = Watch.flags(read: read, write: write)
        guard let event, wanted != flags else { return }
        flags = wanted
        event_del(event)
        guard event_assign(event, loop.base, fd, wanted, Watch.callback, Unmanaged.passUnretained(self).toOpaque()) == 0,
              event_add(event, nil) == 0 else { return cancel() }
    }

    /// Stops watching, keeping the event for a later `set` on the same descriptor number:
    /// curl stops and starts watching a kept-alive connection on every request, and
    /// making a new event each time cost more than the request's routing.
    public func pause() {
        guard let event, flags != Watch.paused else { return }
        flags = Watch.paused
        event_del(event)
    }

    /// No direction: what `flags` says while paused (EV_PERSIST alone is never asked for).
    private static let paused = Int16(EV_PERSIST)

    /// event_callback_fn
    static let callback: event_callback_fn = { _, what, arg in
        Unmanaged<Watch>.fromOpaque(arg!).takeUnretainedValue().fire(what & Int16(EV_READ) != 0, what & Int16(EV_WRITE) != 0)
    }
}

/// A timer. One-shot ones can be re-armed, and `schedule(after: 0)` means the next loop
/// turn; repeating ones (EV_PERSIST) fire every `schedule(after:)` interval until stopped.
public final class Timer: LoopEvent {
    private let fire: () -> Void

    init(loop: EventLoop, repeating: Bool, _ fire: @escaping () -> Void) {
        self.fire = fire
        super.init()
        event = event_new(loop.base, -1, repeating ? Int16(EV_PERSIST) : 0, Timer.callback, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A cancelled timer stays cancelled: scheduling it does nothing.
    public func schedule(after seconds: Double) {
        guard let event else { return }
        var tv = timeval(seconds: seconds)
        // A timer libevent cannot arm stays cancelled, like one that never existed.
        if event_add(event, &tv) != 0 { cancel() }
    }

    public func stop() {
        if let event { event_del(event) }
    }

    /// event_callback_fn
    static let callback: event_callback_fn = { _, _, arg in
        Unmanaged<Timer>.fromOpaque(arg!).takeUnretainedValue().fire()
    }
}
