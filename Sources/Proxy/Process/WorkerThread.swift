#if canImport(Glibc)
import Glibc
#endif

/// A joinable pthread running one closure (the worker owns everything it creates).
enum WorkerThread {
    final class Body: @unchecked Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func spawn(_ run: @escaping @Sendable () -> Void) -> pthread_t {
        var thread = pthread_t()
        let body = Unmanaged.passRetained(Body(run)).toOpaque()
        pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, body)
        return thread
    }
}
