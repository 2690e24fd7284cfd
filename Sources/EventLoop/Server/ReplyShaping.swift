/// How a reply leaves when network conditions shape it (DESIGN §3): held before its first
/// byte, paced to a rate, and possibly cut short.
public struct ReplyShaping: Sendable, Equatable {
    public enum Ending: Sendable, Equatable {
        /// The whole reply.
        case whole
        /// The head and half the body, then the connection closes.
        case truncate
        /// No reply: the connection is reset once the delay has passed.
        case reset
    }

    /// Seconds before the first byte.
    public var delay: Double
    /// Bytes per second; nil = as fast as the client takes them.
    public var bytesPerSecond: Int?
    public var ending: Ending

    public init(delay: Double = 0, bytesPerSecond: Int? = nil, ending: Ending = .whole) {
        self.delay = max(0, delay)
        self.bytesPerSecond = bytesPerSecond.map { max(1, $0) }
        self.ending = ending
    }

    /// The longest a shaped reply may take from its first byte; then its connection closes
    /// (at 1 byte per second a large reply would otherwise hold its buffers for days).
    public static let maxSeconds = 600.0
}
