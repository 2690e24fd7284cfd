import EventLoop
import HTTPCore
import Serializers

/// serializerd's own endpoints: `/metrics` and everything under `/-/`. They answer only
/// clients in `admin.allow`, checked against the socket peer.
enum AdminEndpoint {
    case health
    case unknown

    init?(path: String) {
        guard path == "/metrics" || path.hasPrefix("/-/") else { return nil }
        self = path == "/-/health" ? .health : .unknown
    }
}

extension Worker {
    func serveAdmin(_ endpoint: AdminEndpoint, request: ServerRequest, writer: ResponseWriter) {
        guard let peer = IPAddress(request.peerAddress), config.adminAllow.contains(where: { $0.contains(peer) }) else {
            writer.problem(.forbidden, route: nil)
            return
        }
        switch endpoint {
        case .health:
            let body = JSONValue.object([
                ("status", .string("ok")), ("version", .string(ServerVersion.string)),
                ("uptime_seconds", .number(String(Int(Clock.now() - ProcessStart.monotonic)))),
            ])
            writer.send(status: 200, headers: [("Content-Type", "application/json; charset=utf-8")], body: NormalizedJSON(body).bytes)
        case .unknown:
            writer.problem(.noRoute, route: nil)
        }
    }
}

/// When the server started; `Server.run` reads it first so it is set at startup.
enum ProcessStart {
    static let monotonic = Clock.now()
}
