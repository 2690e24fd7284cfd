import EventLoop
import HTTPCore
import Telemetry

/// Why a stream ended: the outcome its completion event carries.
enum StreamEnd {
    case clientClosed
    /// Too far behind for too long: dropped at once, unsent bytes included.
    case evicted
    case shutdown

    var outcome: ResponseWriter.Outcome {
        switch self {
        case .clientClosed: .ok
        case .evicted:
            ResponseWriter.Outcome(label: "evicted", error: "the subscriber fell more than \(EventStreamLimits.backlogBytes) bytes behind for \(EventStreamLimits.stallSeconds) s")
        case .shutdown: ResponseWriter.Outcome(label: "unavailable", error: "the server is shutting down")
        }
    }
}
