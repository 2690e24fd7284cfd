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

    /// What kind of stream an answer with this Content-Type value is, if any: read from
    /// the bytes (every answer is asked), a MediaType made only for `bytes` ranges.
    func kind(contentType value: UnsafeBufferPointer<UInt8>) -> StreamKind? {
        guard mode == .auto else { return nil }
        var start = 0, end = 0
        while start < value.count, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        end = start
        while end < value.count, value[end] != UInt8(ascii: ";"), value[end] != 0x20, value[end] != 0x09 { end += 1 }
        let essence = UnsafeBufferPointer(rebasing: value[start..<end])
        for (name, kind) in Self.streamingTypes where Self.sameIgnoringCase(essence, name) { return kind }
        guard !bytes.isEmpty, let media = MediaType(String(decoding: value, as: UTF8.self)) else { return nil }
        return bytes.contains { $0.matches(media) } ? .bytes : nil
    }

    static let streamingTypes: [([UInt8], StreamKind)] = [
        (Array("text/event-stream".utf8), .sse), (Array("application/x-ndjson".utf8), .ndjson(sequence: false)),
        (Array("application/jsonl".utf8), .ndjson(sequence: false)), (Array("application/x-jsonlines".utf8), .ndjson(sequence: false)),
        (Array("application/json-seq".utf8), .ndjson(sequence: true)),
    ]

    static func sameIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ lower: [UInt8]) -> Bool {
        guard a.count == lower.count else { return false }
        for k in 0..<a.count where (a[k] &- 0x41 < 26 ? a[k] | 0x20 : a[k]) != lower[k] { return false }
        return true
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
