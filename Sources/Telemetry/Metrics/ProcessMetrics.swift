#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics (names and help as the Prometheus client libraries
/// write them), read from /proc/self at scrape time. /proc/self stays readable under
/// the unit's ProcSubset=pid; /proc/stat does not, so the start time is our own.
struct ProcessMetrics {
    var cpuSeconds: Double = 0
    var residentBytes: UInt64 = 0
    var virtualBytes: UInt64 = 0
    var openFDs: UInt64 = 0
    var maxFDs: UInt64 = 0
    var startTime: Double = 0

    static func read(startTime: Double) -> ProcessMetrics {
        var metrics = ProcessMetrics(startTime: startTime)
        if let stat = readFile("/proc/self/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) {
            // Fields after "pid (comm) ": state is field 3; utime 14, stime 15, vsize 23, rss 24.
            let fields = stat[(close + 2)...].split(separator: UInt8(ascii: " ")).map { UInt64(String(decoding: $0, as: UTF8.self)) ?? 0 }
            if fields.count > 21 {
                let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
                metrics.cpuSeconds = Double(fields[11] + fields[12]) / ticks
                metrics.virtualBytes = fields[20]
                metrics.residentBytes = fields[21] * UInt64(sysconf(Int32(_SC_PAGESIZE)))
            }
        }
        if let dir = opendir("/proc/self/fd") {
            var count: UInt64 = 0
            while let entry = readdir(dir) {
                if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
            }
            closedir(dir)
            metrics.openFDs = count > 0 ? count - 1 : 0   // not the directory's own descriptor
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { metrics.maxFDs = UInt64(limit.rlim_cur) }
        return metrics
    }

    func render(into out: inout PrometheusText) {
        let families: [(name: String, type: String, help: String, value: Double)] = [
            ("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", Double(residentBytes)),
            ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", Double(virtualBytes)),
            ("process_open_fds", "gauge", "Number of open file descriptors.", Double(openFDs)),
            ("process_max_fds", "gauge", "Maximum number of open file descriptors.", Double(maxFDs)),
            ("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", startTime),
        ]
        for family in families {
            out.family(family.name, family.type, family.help)
            out.sample(family.name, [], family.value)
        }
    }

    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? Array(bytes[..<n]) : nil
    }
}
