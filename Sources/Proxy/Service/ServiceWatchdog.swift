import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// The watchdog interval systemd asks for (`WatchdogSec=` → `$WATCHDOG_USEC`), meant for
/// this process (`$WATCHDOG_PID`, when set, must be ours).
public enum ServiceWatchdog {
    public static func interval(environment: [String: String]) -> Double? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
        return Double(usec) / 1_000_000
    }
}
