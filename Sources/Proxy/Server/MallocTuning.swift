#if canImport(Glibc)
import Glibc
#endif

/// glibc returns freed memory above 128 KiB to the kernel and maps fresh pages for the
/// next response body, so every 100 KB–1 MB response paid page faults (measured with
/// perf: ~6% of the process at 100 KB). Raising the trim and mmap thresholds keeps that
/// memory for reuse; it stays bounded by the peak of bodies in flight.
enum MallocTuning {
    static func apply() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3   // M_TRIM_THRESHOLD, M_MMAP_THRESHOLD
        _ = mallopt(trimThreshold, 256 << 20)
        _ = mallopt(mmapThreshold, 64 << 20)
    }
}
