#if canImport(Glibc)
import Glibc
#endif

/// A joinable pthread running one closure (its owner creates everything it uses): each
/// worker's loop, and the trace exporter's.
public enum JoinableThread {
    final class Body: @unchecked Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    public static func spawn(_ run: @escaping @Sendable () -> Void) -> pthread_t {
        var thread = pthread_t()
        let body = Unmanaged.passRetained(Body(run)).toOpaque()
        pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, body)
        return thread
    }
}
