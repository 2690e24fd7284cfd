import EventLoop
import HTTPCore
import Telemetry

/// Limits that keep a slow subscriber from costing anyone else anything.
enum EventStreamLimits {
    /// Unsent bytes we hold for one client before we stop taking its events (they then
    /// wait in its hub queue, which drops past `EventHub.subscriberQueueLimit`).
    static let backlogBytes = 128 << 10
    /// A client that stays over the backlog this long is disconnected.
    static let stallSeconds = 5.0
    /// A comment line this often keeps proxies from timing the stream out.
    static let keepaliveSeconds = 15.0
    static let kernelSendBuffer: Int32 = 64 << 10
    static let tickSeconds = 1.0
    /// Events that arrive within this long of the first waiting one leave in the same
    /// write: one write and wake-up per worker flush (5 ms) is more than a page needs,
    /// and a flow still shows well inside 250 ms of its reply (45–65 ms measured).
    static let batchSeconds = 0.025
}
