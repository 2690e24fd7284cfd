internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Deadlines and the ways a connection ends.
extension Connection {
    // MARK: deadlines

    func arm(_ seconds: Double) {
        since = Clock.now()
        var tv = timeval(seconds: seconds)
        event_add(timer, &tv)
    }

    func disarm() { event_del(timer) }

    /// evtimer: a deadline passed.
    static let timerCallback: event_callback_fn = { _, _, arg in
        Unmanaged<Connection>.fromOpaque(arg!).takeUnretainedValue().deadlinePassed()
    }

    func deadlinePassed() {
        switch state {
        case .idle, .reading, .writing, .lingering:
            // Too slow to send its request, or to take its reply (or to close after it);
            // `close` tells a reply still being sent that it did not arrive.
            close()
        case .handling, .streaming, .closed:
            break
        }
    }

    // MARK: closing

    func socketError() -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error
    }

    /// After a reply that ends the connection: our FIN follows the bytes, and input is
    /// drained until the client closes (bounded), so the kernel does not reset the reply
    /// away before the client has read it.
    func closeGracefully() {
        shutdown(fd, Int32(SHUT_WR))
        if peerFinished {
            close()
            return
        }
        state = .lingering
        current = nil
        pending = []
        pendingStart = 0
        if readPaused {
            readPaused = false
            event_add(readEvent, nil)
        }
        arm(Connection.lingerSeconds)
    }

    /// Closes at once. A request with the handler learns of it when it replies.
    func close() {
        guard state != .closed else { return }
        let wasStreaming = state == .streaming
        let request = current
        state = .closed
        current = nil
        for event in [readEvent, writeEvent, timer] where event != nil {
            event_del(event)
            event_free(event)
        }
        readEvent = nil
        writeEvent = nil
        timer = nil
        if queuedBytes > 0 { server.budget.release(queuedBytes) }
        queuedBytes = 0
        output = []
        pending = []
        Glibc.close(fd)
        withExtendedLifetime(self) {
            server.connectionClosed(self)
            if wasStreaming {
                request?.streamClosed()
            } else if let request, request.onFinish != nil {
                request.finish(delivered: false)
            }
        }
    }
}
