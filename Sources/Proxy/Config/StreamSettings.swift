import HTTPCore

/// A route's `stream:` (DESIGN §9): which answers are served as they arrive, and what
/// happens to an event its serializer refuses.
public struct StreamSettings: Sendable, Equatable {
    public enum Mode: String, Sendable { case auto, off }
    public enum OnInvalid: String, Sendable { case pass, errorEvent = "error_event", drop, close }

    public var mode = Mode.auto
    /// No upstream byte for this long ends a stream.
    public var idle: Double = 60
    public var onInvalid = OnInvalid.pass
    /// Event data forwarded as is.
    public var sentinels: [[UInt8]] = [Array("[DONE]".utf8)]
    /// Content types forwarded untouched as they arrive.
    public var bytes: [MediaRange] = []
    /// The longest SSE event or NDJSON record held (`websocket.max_message`).
    public var maxMessage = 16 << 20

    public init() {}

    /// What kind of stream an answer of this media type is, if any.
    func kind(of media: MediaType?) -> StreamKind? {
        guard mode == .auto, let media else { return nil }
        switch media.essence {
        case "text/event-stream": return .sse
        case "application/x-ndjson", "application/jsonl", "application/x-jsonlines": return .ndjson(sequence: false)
        case "application/json-seq": return .ndjson(sequence: true)
        default: return bytes.contains { $0.matches(media) } ? .bytes : nil
        }
    }
}

enum StreamKind: Equatable {
    case sse, bytes
    case ndjson(sequence: Bool)

    var name: String {
        switch self {
        case .sse: "sse"
        case .ndjson: "ndjson"
        case .bytes: "bytes"
        }
    }
}

extension ConfigLoader {
    static func stream(_ node: ConfigNode?) throws(ConfigError) -> StreamSettings {
        var settings = StreamSettings()
        guard let node else { return settings }
        let m = try node.mapping(allowed: ["mode", "idle", "on_invalid", "sentinels", "bytes"])
        if let n = m["mode"] {
            let text = try n.string()
            guard let mode = StreamSettings.Mode(rawValue: text) else { throw n.error("expected auto or off, found '\(text)'") }
            settings.mode = mode
        }
        if let n = m["idle"] { settings.idle = try n.seconds() }
        if let n = m["on_invalid"] {
            let text = try n.string()
            guard let mode = StreamSettings.OnInvalid(rawValue: text) else {
                throw n.error("expected pass, error_event, drop or close, found '\(text)'")
            }
            settings.onInvalid = mode
        }
        if let n = m["sentinels"] { settings.sentinels = try n.strings().map { Array($0.utf8) } }
        if let n = m["bytes"] {
            settings.bytes = []
            for item in try n.sequence() {
                let text = try item.string()
                guard let range = MediaRange(text) else { throw item.error("expected a media type such as video/mp4 or audio/*, found '\(text)'") }
                settings.bytes.append(range)
            }
        }
        return settings
    }
}
