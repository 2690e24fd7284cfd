#if canImport(Glibc)
import Glibc
#endif

/// glibc returns freed memory above 128 KiB to the kernel and maps fresh pages for the
/// next response body, so every 100 KB–1 MB response paid page faults (measured with
/// perf: ~6% of the process at 100 KB). Raising the trim and mmap thresholds keeps that
/// memory for reuse. Bodies of 4 MiB and more are still mapped and returned at once: kept
/// in the heap they held the peak of every burst of large replies (24 slow readers of
/// 20 MB held 172 MiB with a 64 MiB buffer budget), where the page faults cost little
/// beside transcoding megabytes. Fastbins are off: with them, every large allocation (a
/// body, an output) first merged every small chunk freed since the last one
/// (malloc_consolidate: with malloc and free, ~5% of a 100 KB request's CPU in perf); the
/// per-thread cache still takes the small ones. Measured, both builds loaded at once on one
/// core: CPU per request 0.97-0.98x at 100 KB and 1 MB, unchanged at 1 KB.
public enum MallocTuning {
    public static func apply() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let maxFast: Int32 = 1, trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3   // M_MXFAST, M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
        _ = mallopt(trimThreshold, 32 << 20)
        _ = mallopt(mmapThreshold, 4 << 20)
        _ = mallopt(maxFast, 0)
    }
}
