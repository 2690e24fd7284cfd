import Synchronization

/// The last events of the last streams and WebSockets (DESIGN §9), for the inspector,
/// shared by every worker. A relay keeps its own and hands them over (at most four times
/// a second, and at its end) only while someone watches `/-/events`: nothing is kept, and
/// no lock taken, otherwise. At most `streams` × `events` × `eventBytes` (about 12.5 MiB).
public final class StreamLog: Sendable {
    public static let streams = 32
    public static let events = 100
    public static let eventBytes = 4096

    /// One event or message as the inspector shows it: redacted and cut before it is kept.
    public struct Entry: Sendable {
        /// Wall-clock seconds.
        public let time: Double
        /// `receive` (toward the client) or `send` (toward the upstream) for a WebSocket; nil for a stream.
        public let direction: String?
        /// The SSE `event` name, or the WebSocket message's kind (`text`, `binary`).
        public let label: String?
        public let data: [UInt8]
        /// The data's size before it was cut.
        public let bytes: Int

        public init(time: Double, direction: String?, label: String?, data: [UInt8], redaction: Redaction) {
            self.time = time
            self.direction = direction
            self.label = label
            bytes = data.count
            let redacted = redaction.body(data, contentType: nil) ?? data
            self.data = redacted.count > StreamLog.eventBytes ? Array(redacted.prefix(StreamLog.eventBytes)) : redacted
        }
    }

    public struct Stream: Sendable {
        public let requestID: String
        public let kind: String
        public let open: Bool
        public let entries: [Entry]
    }

    private let kept = Mutex<[Stream]>([])

    public init() {}

    /// A stream's events so far (the newest `events`), replacing what it handed over before.
    public func put(requestID: String, kind: String, open: Bool, entries: [Entry]) {
        let stream = Stream(requestID: requestID, kind: kind, open: open, entries: Array(entries.suffix(Self.events)))
        kept.withLock { list in
            list.removeAll { $0.requestID == requestID }
            list.append(stream)
            if list.count > Self.streams { list.removeFirst(list.count - Self.streams) }
        }
    }

    public func find(_ requestID: String) -> Stream? {
        kept.withLock { list in list.last { $0.requestID == requestID } }
    }
}

/// A relay's own last events: a ring of `StreamLog.events`, kept on its worker.
public struct RecentEvents: Sendable {
    private var ring: [StreamLog.Entry] = []
    private var next = 0
    /// When the log was last handed these (`Clock` seconds).
    public var published = 0.0

    public init() {}

    public mutating func add(_ entry: StreamLog.Entry) {
        if ring.count < StreamLog.events { return ring.append(entry) }
        ring[next] = entry
        next = (next + 1) % StreamLog.events
    }

    /// Oldest first.
    public var entries: [StreamLog.Entry] { Array(ring[next...] + ring[..<next]) }
}
