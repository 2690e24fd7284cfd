internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Why accepting paused (one report per episode).
public enum AcceptPause: Sendable {
    /// `limits.max_connections` reached and no waiting connection to close.
    case maxConnections
    /// The process or system ran out of descriptors (EMFILE/ENFILE).
    case descriptors
}
