/// A route's `websocket:` (DESIGN §9): whether `Upgrade: websocket` is relayed, and the
/// bounds and normalization of its messages.
public struct WebSocketSettings: Sendable, Equatable {
    public enum Mode: String, Sendable { case relay, off }
    public enum Normalize: String, Sendable { case none, json }

    public var mode = Mode.relay
    public var normalize = Normalize.none
    /// A larger message closes both sides with 1009; also bounds an SSE event or NDJSON record.
    public var maxMessage = 16 << 20
    /// No frame either way for this long closes both sides with 1001.
    public var idle: Double = 300

    public init() {}
}

extension ConfigLoader {
    static func websocket(_ node: ConfigNode?) throws(ConfigError) -> WebSocketSettings {
        var settings = WebSocketSettings()
        guard let node else { return settings }
        let m = try node.mapping(allowed: ["mode", "normalize", "max_message", "idle"])
        if let n = m["mode"] {
            let text = try n.string()
            guard let mode = WebSocketSettings.Mode(rawValue: text) else { throw n.error("expected relay or off, found '\(text)'") }
            settings.mode = mode
        }
        if let n = m["normalize"] {
            let text = try n.string()
            guard let normalize = WebSocketSettings.Normalize(rawValue: text) else { throw n.error("expected none or json, found '\(text)'") }
            settings.normalize = normalize
        }
        if let n = m["max_message"] {
            let bytes = try n.bytes()
            guard bytes >= 125 else { throw n.error("expected at least 125 bytes (a control frame's payload), found \(bytes)") }
            settings.maxMessage = bytes
        }
        if let n = m["idle"] { settings.idle = try n.seconds() }
        return settings
    }
}
