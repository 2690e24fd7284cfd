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
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ n: Int = 2) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}
