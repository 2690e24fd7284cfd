internal import CLibevent

/// A connection's three libevent events, owned together: freed when this is released,
/// which `Connection.close` does before the connection itself can go (libevent holds an
/// unretained pointer to it).
final class ConnectionEvents {
    let read: OpaquePointer
    let write: OpaquePointer
    let timer: OpaquePointer

    /// nil when libevent cannot make them (out of memory): the connection is not served.
    init?(base: OpaquePointer, fd: Int32, owner: UnsafeMutableRawPointer,
          read onRead: event_callback_fn, write onWrite: event_callback_fn, timer onTimer: event_callback_fn) {
        let read = event_new(base, fd, Int16(EV_READ | EV_PERSIST), onRead, owner)
        let write = event_new(base, fd, Int16(EV_WRITE | EV_PERSIST), onWrite, owner)
        let timer = event_new(base, -1, 0, onTimer, owner)
        guard let read, let write, let timer else {
            for event in [read, write, timer] where event != nil { event_free(event) }
            return nil
        }
        self.read = read
        self.write = write
        self.timer = timer
    }

    /// Starts watching for input; false if libevent refused.
    @discardableResult
    func watchRead() -> Bool { event_add(read, nil) == 0 }

    func stopReading() { event_del(read) }

    /// Waits for the socket to take more output; false if libevent refused.
    @discardableResult
    func watchWrite() -> Bool { event_add(write, nil) == 0 }

    func stopWriting() { event_del(write) }

    /// (Re)arms the one deadline; false if libevent refused.
    @discardableResult
    func arm(_ seconds: Double) -> Bool {
        var tv = timeval(seconds: seconds)
        return event_add(timer, &tv) == 0
    }

    func disarm() { event_del(timer) }

    deinit {
        for event in [read, write, timer] {
            event_del(event)
            event_free(event)
        }
    }
}
