import Synchronization

/// Events as `/-/events` sends them: each one's Server-Sent Events frame, back to back.
/// A worker renders its batch once, whoever listens, and every subscriber's queue shares
/// the bytes.
public struct EventFrames: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// Where each event's frame ends in `bytes`.
    private(set) var ends: [Int] = []

    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }

    init() {}

    /// One whole frame, as given.
    init(frame: [UInt8]) {
        bytes = frame
        ends = [frame.count]
    }

    public init(_ batch: [CompletionEvent]) {
        var clock = LogClock()
        var scratch: [UInt8] = []
        self.init(batch, clock: &clock, scratch: &scratch)
    }

    /// `event: request_completed`, the request id as the SSE id, the event's JSON as data.
    /// Written into `scratch` (the worker's, grown to the worst case), then kept at its
    /// size: queues hold these bytes until a slow page reads them.
    init(_ batch: [CompletionEvent], clock: inout LogClock, scratch: inout [UInt8]) {
        let frameBound = Self.head.utf8CodeUnitCount + Self.data.utf8CodeUnitCount + 2
        let bound = batch.reduce(0) { $0 + frameBound + $1.requestID.utf8.count + ($1.rendered?.count ?? $1.jsonBound) }
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        var ends: [Int] = []
        ends.reserveCapacity(batch.count)
        bytes = scratch.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var w = RawJSONWriter(base)
            for event in batch {
                w.raw(Self.head)
                var id = event.requestID
                id.withUTF8 { w.copy($0) }
                w.raw(Self.data)
                if let rendered = event.rendered {
                    rendered.withUnsafeBufferPointer { w.copy($0) }
                } else {
                    w.p += event.writeJSON(to: w.p, clock: &clock)
                }
                w.raw("\n\n")
                ends.append(w.p - base)
            }
            return Array(UnsafeBufferPointer(start: base, count: w.p - base))
        }
        self.ends = ends
    }

    private static let head: StaticString = "event: request_completed\nid: "
    private static let data: StaticString = "\ndata: "

    /// The first `n` frames (n ≥ 1).
    func prefix(_ n: Int) -> EventFrames {
        guard n < count else { return self }
        var part = EventFrames()
        part.ends = Array(ends[..<n])
        part.bytes = Array(bytes[..<ends[n - 1]])
        return part
    }

    /// Where frame `i` starts.
    func start(_ i: Int) -> Int { i == 0 ? 0 : ends[i - 1] }
}
