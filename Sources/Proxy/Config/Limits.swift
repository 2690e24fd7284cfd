import Serializers

public struct Limits: Sendable, Equatable {
    public var maxRequestBody = 1 << 20
    public var maxResponseBody = 32 << 20
    public var maxHeaderBytes = 64 << 10
    public var maxJSONDepth = JSONReadOptions.defaultMaxDepth
    /// Open client connections, all workers together.
    public var maxConnections = 4096
    /// Upstream bodies being received plus reply bytes not yet sent, all connections together.
    public var maxBufferedBytes = 256 << 20
    /// Replies held or paced by network conditions at once, all workers together; past
    /// it, requests go unshaped (faults still apply).
    public var maxActiveFaults = 4096

    /// What a request serializer may send upstream (DESIGN §5): 4 × `max_request_body`.
    public var maxRequestSerializerOutput: Int {
        let (scaled, overflow) = maxRequestBody.multipliedReportingOverflow(by: 4)
        return overflow ? .max : scaled
    }
}
