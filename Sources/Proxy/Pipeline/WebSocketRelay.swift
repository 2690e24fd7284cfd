import EventLoop
import HTTPCore
import Serializers
import Telemetry
import Upstream

/// One WebSocket relayed to the route's upstream (DESIGN §9): libcurl connects (TLS and
/// the route's policy), the handshake goes out on that connection, and after the
/// upstream's 101 frames flow both ways as they arrive, parsed for bounds and
/// visibility. Any other answer to the handshake takes the ordinary response path.
/// An open WebSocket as the worker sees it: listed in `/-/inflight`, closed at shutdown.
protocol OpenWebSocket: AnyObject {
    func progress(now: Double) -> TransferProgress
    /// The daemon stops: 1001.
    func shutdown()
}

final class WebSocketRelay: OpenWebSocket {
    /// Bytes waiting for a slow side before the other side is no longer read.
    static let highWater = 256 << 10
    /// After one side's close frame, the other has this long to answer it.
    static let closeWait = 5.0

    let context: RequestContext
    let route: Route
    unowned let pipeline: RequestPipeline
    let client: any TunnelReplier
    let key: String
    var tunnel: UpstreamTunnel?
    private var handshake: ResponseReader
    var fromClient: WebSocketFrameReader
    var fromUpstream: WebSocketFrameReader
    /// Bytes for the upstream that its socket has not taken yet.
    var toUpstream: [UInt8] = []
    var state = State.connecting
    var upstreamReadPaused = false
    var clientInputPaused = false
    /// Close frames seen from each side, in order.
    var clientClosed = false, upstreamClosed = false
    var closeCode: Int?
    var lastFrame = 0.0
    private var timer: Timer?
    var counters: WebSocketCounters?
    var toClient = 0, toUpstreamCount = 0, bytesToClient = 0, bytesToUpstream = 0
    /// A recording tape's copy of the conversation.
    var recording: WebSocketRecording?
    /// The upstream's 101 head (for the tape).
    var upstreamHead = HeaderFields()
    /// The last messages, for the inspector (kept only while someone watches).
    var recentEvents: RecentEvents?
    /// Message payload bytes from the upstream (the completion event's `bytes_in`).
    var bytesFromUpstream = 0
    /// An upstream text message being reassembled for `normalize: json`.
    var textMessage: [UInt8]?

    enum State {
        case connecting, handshaking, open, ended
    }

    init(_ context: RequestContext, route: Route, pipeline: RequestPipeline, client: any TunnelReplier, key: String) {
        self.context = context
        self.route = route
        self.pipeline = pipeline
        self.client = client
        self.key = key
        handshake = ResponseReader(maxHead: 64 << 10, maxBody: pipeline.config.limits.maxResponseBody)
        fromClient = WebSocketFrameReader(fromClient: true, maxMessage: route.websocket.maxMessage)
        fromUpstream = WebSocketFrameReader(fromClient: false, maxMessage: route.websocket.maxMessage)
    }

    // MARK: connecting

    func connect() {
        pipeline.requestStarted()
        context.upstreamSentAt = pipeline.clock.now()
        let request = UpstreamRequest(url: context.url, method: "GET", headers: HeaderFields(), body: [], timeout: route.timeout,
                                      connectTimeout: route.connectTimeout, followRedirects: 0, maxResponseBytes: 0, tls: route.tls,
                                      httpVersion: .http1_1,
                                      tag: UpstreamRequest.Tag(requestID: context.requestID, route: route.name, method: "GET", path: context.path))
        arm(route.timeout)
        pipeline.session.openTunnel(request) { [weak self] result in
            guard let self else {
                if case .success(let tunnel) = result { tunnel.close() }
                return
            }
            switch result {
            case .success(let tunnel): self.connected(tunnel)
            case .failure(let failure): self.handshakeFailed(failure)
            }
        }
    }

    private func connected(_ tunnel: UpstreamTunnel) {
        guard state == .connecting else { return tunnel.close() }
        self.tunnel = tunnel
        state = .handshaking
        tunnel.onAbort = { [weak self] in self?.upstreamGone("the server is stopping") }
        let request = handshakeRequest()
        context.upstreamSent = .init(lines: request.fields.bytes, body: [])
        toUpstream = request.bytes
        watchUpstream()
        flushUpstream()
    }

    /// The handshake as the upstream gets it: the route's and the client's fields as for
    /// any request (DESIGN §4), the key, version and protocols forwarded, and
    /// permessage-deflate taken out of the extensions offered.
    private func handshakeRequest() -> (bytes: [UInt8], fields: HeaderFields) {
        var fields = pipeline.upstreamFields(context, route: route)
        let offered = fields.values("Sec-WebSocket-Extensions")
        fields.remove("Sec-WebSocket-Extensions")
        let kept = offered.flatMap { $0.split(separator: ",") }.filter {
            $0.split(separator: ";").first?.trimmingSpaces.lowercased() != "permessage-deflate"
        }
        if !kept.isEmpty { fields.append("Sec-WebSocket-Extensions", kept.map { String($0.trimmingSpaces) }.joined(separator: ", ")) }
        fields.append("Upgrade", "websocket")
        fields.append("Connection", "Upgrade")
        // Connect-only: libcurl sends nothing of the jar, so its cookies are added here.
        if let jar = route.cookies, let cookie = jar.header(for: context.url, now: Int(pipeline.clock.wall())) {
            fields.append("Cookie", cookie)
        }
        let (authority, target) = Self.split(context.url)
        var bytes = Array("GET \(target) HTTP/1.1\r\nHost: \(authority)\r\n".utf8)
        bytes += fields.bytes
        bytes += [0x0D, 0x0A]
        return (bytes, fields)
    }

    /// `http://host:port/p?q` → (`host:port`, `/p?q`).
    static func split(_ url: String) -> (String, String) {
        guard let scheme = url.range(of: "://") else { return ("", "/") }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return (String(rest), "/") }
        return (String(rest[..<slash]), String(rest[slash...]))
    }

    /// The upstream's answer to the handshake, as it arrives.
    func handshakeRead(_ bytes: [UInt8], end: Bool) {
        let event: ResponseReader.Event
        do throws(ResponseReader.Failure) {
            event = try handshake.feed(bytes, end: end)
        } catch {
            return handshakeFailed(.unavailable(code: 8, message: Self.describe(error)))
        }
        switch event {
        case .needMore:
            return
        case .switched(_, let headers, let rest):
            switchProtocols(headers, rest: rest)
        case .complete(let status, let headers, let body):
            // Not a 101: the ordinary response path answers it.
            handshakeEnded()
            let answer = UpstreamResponse(status: status, headers: headers, contentType: headers.first("Content-Type"), body: body,
                                          url: context.url)
            closeTunnel()
            pipeline.complete(.success(answer), context)
            done()
        }
    }

    static func describe(_ failure: ResponseReader.Failure) -> String {
        switch failure {
        case .malformed(let why): "the upstream's answer to the WebSocket handshake is not HTTP/1.1: \(why)"
        case .headTooLarge(let limit): "the upstream's answer to the WebSocket handshake has a head over \(limit) bytes"
        case .bodyTooLarge(let limit): "the upstream's answer to the WebSocket handshake is over \(limit) bytes"
        }
    }

    /// The upstream agreed: its 101 goes to the client, and the relay opens.
    private func switchProtocols(_ headers: HeaderFields, rest: [UInt8]) {
        let expected = WebSocketAccept.value(forKey: key)
        guard WebSocketStage.hasToken(headers, "upgrade", "websocket"), WebSocketStage.hasToken(headers, "connection", "upgrade") else {
            return handshakeFailed(.unavailable(code: 8, message: "the upstream's 101 does not upgrade to websocket"))
        }
        guard let accept = headers.first("Sec-WebSocket-Accept"), accept == expected else {
            return handshakeFailed(.unavailable(code: 8, message: "the upstream's Sec-WebSocket-Accept does not match the key"))
        }
        handshakeEnded()
        upstreamHead = headers
        if context.upstreamAnswered != nil { recording = WebSocketRecording() }
        var reply = HeaderFields()
        reply.append("Upgrade", "websocket")
        reply.append("Connection", "Upgrade")
        reply.append("Sec-WebSocket-Accept", accept)
        let extensions = headers.first("Sec-WebSocket-Extensions")
        for name in ["Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions"] {
            if let value = headers.first(name) { reply.append(name, value) }
        }
        if let jar = route.cookies {
            jar.store(setCookies: headers.values("Set-Cookie"), from: context.url, now: Int(pipeline.clock.wall()))
        } else {
            for cookie in headers.values("Set-Cookie") { reply.append("Set-Cookie", cookie) }
        }
        reply.append("X-Request-Id", context.requestID)
        reply.append("Serializerd-Source", RequestContext.Source.upstream.rawValue)
        reply.append("Server-Timing", "upstream;dur=" + NumberText.milliseconds(context.upstreamSeconds ?? 0))
        if extensions != nil {
            // An extension the upstream agreed to may use the reserved bits.
            fromClient = WebSocketFrameReader(fromClient: true, maxMessage: route.websocket.maxMessage, extensions: true)
            fromUpstream = WebSocketFrameReader(fromClient: false, maxMessage: route.websocket.maxMessage, extensions: true)
        }
        // Open before the tunnel starts: the client's first frames may come with it.
        state = .open
        counters = pipeline.telemetry.metrics.webSocket(route: route.name)
        counters?.opened()
        pipeline.openWebSockets[ObjectIdentifier(self)] = self
        lastFrame = pipeline.clock.now()
        arm(route.websocket.idle)
        let started = client.startTunnel(headers: reply, onInput: { [weak self] in self?.clientInput($0) },
                                         onDrained: { [weak self] in self?.clientDrained() },
                                         onClose: { [weak self] in self?.clientGone() })
        guard started else { return clientGone() }
        if !rest.isEmpty { rest.withUnsafeBytes { upstreamBytes($0) } }
    }

    private func handshakeEnded() {
        context.upstreamSeconds = pipeline.clock.now() - context.upstreamSentAt
        pipeline.inFlightEnded()
        pipeline.upstreamEnded()
    }

    /// No connection, or no usable answer to the handshake: a problem document says why.
    private func handshakeFailed(_ failure: UpstreamFailure) {
        guard state == .connecting || state == .handshaking else { return }
        handshakeEnded()
        state = .ended
        closeTunnel()
        timer?.cancel()
        pipeline.complete(.failure(failure), context)
        done()
    }

    // MARK: time

    func arm(_ seconds: Double) {
        if timer == nil { timer = pipeline.makeTimer?({ [weak self] in self?.timerFired() }) }
        timer?.schedule(after: seconds)
    }

    private func timerFired() {
        switch state {
        case .connecting, .handshaking:
            handshakeFailed(.timeout)
        case .open:
            let now = pipeline.clock.now()
            if clientClosed || upstreamClosed {
                return finish(label: "ok", error: nil)
            }
            let quiet = now - lastFrame
            if quiet < route.websocket.idle { return arm(route.websocket.idle - quiet) }
            closeBoth(client: WebSocketClose.goingAway, upstream: WebSocketClose.goingAway,
                      reason: "no frame for \(ProxyFailure.seconds(route.websocket.idle)) s (websocket.idle)", label: "websocket_idle")
        case .ended:
            break
        }
    }

    // MARK: the end

    /// Ends both sides and records the one completion event.
    func finish(label: String, error: String?) {
        guard state == .open else { return }
        state = .ended
        timer?.cancel()
        timer = nil
        flushUpstream()
        closeTunnel()
        client.endStream()
        counters?.closed()
        pipeline.openWebSockets[ObjectIdentifier(self)] = nil
        let now = pipeline.clock.now()
        let duration = now - context.started
        context.streamSummary = summary(duration: duration)
        pipeline.publishStreamEvents(recentEvents, context, kind: "websocket")
        writeRecording(now: now)
        context.recorder.record(context, status: 101, bytesOut: bytesToClient,
                                outcome: .init(label: label, serializer: nil, reply: nil, error: error,
                                               upstreamBytes: bytesFromUpstream),
                                duration: duration, responseContentType: nil)
        done()
    }

    func closeTunnel() {
        tunnel?.close()
        tunnel = nil
    }

    /// The request lets its relay go.
    private func done() {
        state = .ended
        context.webSocket = nil
    }

    func summary(duration: Double) -> String {
        Self.summary(toClient: toClient, toUpstream: toUpstreamCount, bytesToClient: bytesToClient, bytesToUpstream: bytesToUpstream,
                     closeCode: closeCode, duration: duration)
    }

    /// The completion event's and `/-/inflight`'s `stream` object of a WebSocket (DESIGN §9).
    static func summary(toClient: Int, toUpstream: Int, bytesToClient: Int, bytesToUpstream: Int, closeCode: Int?, duration: Double) -> String {
        "{\"kind\":\"websocket\",\"messages_to_client\":\(toClient),\"messages_to_upstream\":\(toUpstream),"
            + "\"bytes_to_client\":\(bytesToClient),\"bytes_to_upstream\":\(bytesToUpstream),"
            + "\"close_code\":\(closeCode.map(String.init) ?? "null"),\"duration_ms\":\(Int((duration * 1000).rounded()))}"
    }

    /// The daemon stops: both sides get 1001.
    func shutdown() {
        closeBoth(client: WebSocketClose.goingAway, upstream: WebSocketClose.goingAway, reason: "the server is stopping",
                  label: "unavailable")
    }

    /// `/-/inflight`'s entry for this WebSocket.
    func progress(now: Double) -> TransferProgress {
        TransferProgress(tag: UpstreamRequest.Tag(requestID: context.requestID, route: route.name, method: "GET", path: context.path),
                         started: context.started, bytesUp: bytesToUpstream, bytesDown: bytesToClient, totalUp: nil, totalDown: nil,
                         stream: summary(duration: now - context.started))
    }
}
