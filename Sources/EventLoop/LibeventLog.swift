internal import CLibevent
import HTTPCore
import Synchronization

/// libevent's own messages (`[warn] …` on stderr by default) routed to the daemon's log
/// sink instead, at most one a second: a condition that repeats (a spinning descriptor,
/// say) must not flood the journal. Suppressed messages are counted into the next one.
public enum LibeventLog {
    public typealias Handler = @Sendable (_ severity: String, _ message: String, _ suppressed: Int) -> Void

    private static let state = Mutex<(handler: Handler?, last: Double, suppressed: Int)>((nil, -1, 0))

    /// Installs `handler` for every libevent message in the process (event_set_log_callback).
    public static func route(to handler: @escaping Handler) {
        state.withLock { $0.handler = handler }
        event_set_log_callback(LibeventLog.callback)
    }

    static func deliver(severity: Int32, message: String) {
        let now = Clock.now()
        let pending: (Handler, Int)? = state.withLock { state in
            guard let handler = state.handler else { return nil }
            guard state.last < 0 || now - state.last >= 1 else {
                state.suppressed += 1
                return nil
            }
            state.last = now
            defer { state.suppressed = 0 }
            return (handler, state.suppressed)
        }
        guard let (handler, suppressed) = pending else { return }
        let name = switch severity {
        case Int32(EVENT_LOG_DEBUG): "debug"
        case Int32(EVENT_LOG_MSG): "info"
        case Int32(EVENT_LOG_WARN): "warning"
        default: "error"
        }
        handler(name, message, suppressed)
    }

    /// event_log_cb
    static let callback: event_log_cb = { severity, message in
        LibeventLog.deliver(severity: severity, message: message.map { String(cString: $0) } ?? "")
    }
}
