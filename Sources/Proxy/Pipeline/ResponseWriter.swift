import EventLoop
import Serializers
import Upstream

/// Builds what the client receives (DESIGN §3): normalized JSON, a problem document,
/// or the upstream response passed through; always X-Request-Id and Server-Timing.
struct ResponseWriter {
    let request: ServerRequest
    let requestID: String
    let started: Double
    var upstreamSeconds: Double?
    var serializeSeconds: Double?

    func timingHeader() -> (String, String) {
        var parts = ["total;dur=\(Self.milliseconds(Clock.now() - started))"]
        if let upstreamSeconds { parts.append("upstream;dur=\(Self.milliseconds(upstreamSeconds))") }
        if let serializeSeconds { parts.append("serialize;dur=\(Self.milliseconds(serializeSeconds))") }
        return ("Server-Timing", parts.joined(separator: ", "))
    }

    static func milliseconds(_ seconds: Double) -> String {
        let value = (seconds * 1000 * 1000).rounded() / 1000
        return String(value)
    }

    func send(status: Int, headers: [(String, String)], body: [UInt8]) {
        let noBody = request.method == "HEAD" || status == 204 || status == 205 || status == 304
        request.respond(status: status, headers: headers + [("X-Request-Id", requestID), timingHeader()],
                        body: noBody ? [] : body)
    }

    func problem(_ failure: ProxyFailure, route: String?, extraHeaders: [(String, String)] = []) {
        var headers = [("Content-Type", ProblemDocument.contentType)] + extraHeaders
        if case .methodNotAllowed(let allow) = failure { headers.append(("Allow", allow.joined(separator: ", "))) }
        send(status: failure.clientStatus, headers: headers,
             body: ProblemDocument.render(failure, route: route, requestID: requestID))
    }

    /// A serialized value: the upstream status, JSON, the cache headers forwarded.
    func success(_ value: NormalizedJSON, serializer: String, reply: UpstreamReply, envelope: Bool) {
        let bytes = envelope ? Self.envelope(reply, data: value.bytes) : value.bytes
        var headers = [("Content-Type", "application/json; charset=utf-8"), ("X-Serializerd-Serializer", serializer)]
        for (field, fieldValue) in reply.headers where HeaderPolicy.forwardedDownstreamSet.contains(field.lowercased()) {
            headers.append((field, fieldValue))
        }
        send(status: reply.status, headers: headers, body: bytes)
    }

    /// `on_failure: passthrough`: the upstream response, untouched but for framing.
    func passthrough(_ reply: UpstreamReply) {
        let headers = reply.headers.filter { !HeaderPolicy.hopByHopDownstream.contains($0.0.lowercased()) }
        send(status: reply.status, headers: headers, body: reply.body)
    }

    /// `{"status":…,"headers":{…},"data":…}` with lowercased header names.
    static func envelope(_ reply: UpstreamReply, data: [UInt8]) -> [UInt8] {
        var headers: [(String, JSONValue)] = []
        for (name, value) in reply.headers where !HeaderPolicy.hopByHopDownstream.contains(name.lowercased()) {
            let key = name.lowercased()
            headers.removeAll { $0.0 == key }
            headers.append((key, .string(value)))
        }
        var out = Array("{\"status\":\(reply.status),\"headers\":".utf8)
        out += NormalizedJSON(.object(headers)).bytes
        out += Array(",\"data\":".utf8) + data + [UInt8(ascii: "}")]
        return out
    }
}
