import EventLoop
import HTTPCore

/// `Upgrade: websocket` (DESIGN §9): the handshake checked (RFC 6455 §4.2.1), then
/// relayed to the upstream by a `WebSocketRelay`. A request that asks to upgrade to
/// anything else goes on as a plain one (Upgrade is hop-by-hop).
struct WebSocketStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        switch Self.check(context, route: route) {
        case .notWebSocket: return .passed
        case .answered: return .answered
        case .refused(let failure): return .refused(failure)
        case .valid(let key, let tunnel):
            let relay = WebSocketRelay(context, route: route, pipeline: pipeline, client: tunnel, key: key)
            context.webSocket = relay
            relay.connect()
            return .answered
        }
    }

    enum Handshake {
        /// Not `Upgrade: websocket`: an ordinary request (another Upgrade is hop-by-hop).
        case notWebSocket
        /// Answered already (426).
        case answered
        case refused(ProxyFailure)
        case valid(key: String, tunnel: any TunnelReplier)
    }

    /// The handshake checked (RFC 6455 §4.2.1): what a relay or a tape's replay may answer.
    static func check(_ context: RequestContext, route: Route) -> Handshake {
        let request = context.request
        guard request.asksUpgrade, hasToken(request.fields, "upgrade", "websocket") else { return .notWebSocket }
        guard request.method == "GET" else { return .refused(.webSocketHandshake("a WebSocket handshake is a GET, not \(request.method)")) }
        guard hasToken(request.fields, "connection", "upgrade") else {
            return .refused(.webSocketHandshake("the handshake's Connection header does not name upgrade"))
        }
        let keys = request.fields.values("Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, isValidKey(key) else {
            return .refused(.webSocketHandshake("the handshake needs one Sec-WebSocket-Key: 16 bytes in base64"))
        }
        let versions = request.fields.values("Sec-WebSocket-Version")
        guard versions == ["13"] else {
            let found = versions.isEmpty ? "none" : versions.joined(separator: ", ")
            context.reply.problem(.webSocketVersion("Sec-WebSocket-Version must be 13, found \(found)"), route: route.name,
                                  extraHeaders: [("Sec-WebSocket-Version", "13")])
            return .answered
        }
        guard let tunnel = request as? any TunnelReplier else {
            return .refused(.webSocketHandshake("this connection cannot be upgraded"))
        }
        return .valid(key: key, tunnel: tunnel)
    }

    /// Whether a comma-separated field names `token` (case-insensitive).
    static func hasToken(_ fields: HeaderFields, _ name: String, _ token: String) -> Bool {
        fields.values(name).contains { value in
            value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == token }
        }
    }

    /// A base64 value of 16 bytes: 22 characters and `==` (RFC 6455 §4.1).
    static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[..<22].allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2F
        }
    }
}
