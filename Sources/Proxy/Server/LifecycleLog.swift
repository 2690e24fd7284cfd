import HTTPCore
import Serializers
#if canImport(Glibc)
import Glibc
#endif

/// Lifecycle events (ready, reload, shutdown) as one JSON object per line on stdout,
/// written whole with write(2): stdio buffering would hold lines back under journald.
public enum LifecycleLog {
    public static func event(_ message: String, level: String = "info", _ fields: [(String, JSONValue)] = []) {
        var members: [(String, JSONValue)] = [("ts", .string(timestamp())), ("level", .string(level)), ("msg", .string(message))]
        members += fields
        var line = NormalizedJSON(.object(members)).bytes
        line.append(0x0A)
        line.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTimestamp.format(unixSeconds: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9, fraction: .milliseconds)
    }
}
