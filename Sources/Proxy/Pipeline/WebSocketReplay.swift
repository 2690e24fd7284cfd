import EventLoop
import HTTPCore
import Serializers
import Tapes
import Telemetry
import Upstream

/// A recorded WebSocket conversation replayed in the upstream's place (DESIGN §9): the
/// handshake answered here, then the upstream's messages in recorded order — those before
/// the client's first message at once, then after each client message the ones that
/// followed it in the recording — with their recorded spacing (`tape.timing: recorded`) or
/// at once (`fast`). The client's frames are read as a relay reads them.
final class WebSocketReplay: OpenWebSocket {
    let context: RequestContext
    let route: Route
    unowned let pipeline: RequestPipeline
    let client: any TunnelReplier
    let messages: [WebSocketMessage]
    let fast: Bool
    private var reader: WebSocketFrameReader
    /// The next recorded message not yet played or matched.
    private var next = 0
    /// Upstream messages due now, and when the one before them was recorded.
    private var due: [WebSocketMessage] = []
    private var previousTime: Double?
    private var timer: Timer?
    /// The timer fired for the message first in `due`.
    private var waited = false
    /// No client message yet.
    private var leading = true
    private var idle: Timer?
    private var ended = false
    private var lastFrame = 0.0
    private var counters: WebSocketCounters?
    private var toClient = 0, toUpstream = 0, bytesToClient = 0, bytesToUpstream = 0
    private var closeCode: Int?

    private init(_ context: RequestContext, route: Route, pipeline: RequestPipeline, client: any TunnelReplier,
                 messages: [WebSocketMessage], fast: Bool) {
        self.context = context
        self.route = route
        self.pipeline = pipeline
        self.client = client
        self.messages = messages
        self.fast = fast
        reader = WebSocketFrameReader(fromClient: true, maxMessage: route.websocket.maxMessage)
    }

    /// Answers the handshake with the recording's 101 and starts playing it.
    static func start(_ context: RequestContext, route: Route, in pipeline: RequestPipeline, key: String, client: any TunnelReplier,
                      recorded: HeaderFields, messages: [WebSocketMessage], timing: RouteTape.Timing) {
        let replay = WebSocketReplay(context, route: route, pipeline: pipeline, client: client, messages: messages, fast: timing == .fast)
        var headers = HeaderFields()
        headers.append("Upgrade", "websocket")
        headers.append("Connection", "Upgrade")
        headers.append("Sec-WebSocket-Accept", WebSocketAccept.value(forKey: key) ?? "")
        if let proto = recorded.first("Sec-WebSocket-Protocol") { headers.append("Sec-WebSocket-Protocol", proto) }
        headers.append("X-Request-Id", context.requestID)
        headers.append("Serializerd-Source", RequestContext.Source.tape.rawValue)
        context.webSocketReplay = replay
        replay.counters = pipeline.telemetry.metrics.webSocket(route: route.name)
        replay.counters?.opened()
        pipeline.openWebSockets[ObjectIdentifier(replay)] = replay
        replay.lastFrame = pipeline.clock.now()
        replay.armIdle(route.websocket.idle)
        let started = client.startTunnel(headers: headers, onInput: { [weak replay] in replay?.clientInput($0) },
                                         onDrained: {}, onClose: { [weak replay] in replay?.finish(label: "client_gone", error: "the client closed the connection") })
        guard started else { return replay.finish(label: "client_gone", error: "the client closed the connection") }
        replay.release()
    }

    // MARK: playing

    /// Queues the upstream's messages up to the client's next one in the recording.
    private func release() {
        while next < messages.count, !messages[next].sent {
            due.append(messages[next])
            next += 1
        }
        play()
    }

    private func play() {
        while !ended, let message = due.first {
            // The messages before the client's first are sent at once; later ones keep their
            // recorded distance from the message before them.
            let wait = fast || leading ? 0 : min(route.websocket.idle, max(0, message.time - (previousTime ?? message.time)))
            if wait > 0.0005, !waited {
                if timer == nil { timer = pipeline.makeTimer?({ [weak self] in self?.waited = true; self?.play() }) }
                if let timer { return timer.schedule(after: wait) }
            }
            waited = false
            due.removeFirst()
            previousTime = message.time
            send(message)
        }
    }

    private func send(_ message: WebSocketMessage) {
        var data = message.data
        if route.messageSerializer != nil, message.opcode == 1 {
            let result = route.serializeEvent(data, messages: true)
            if result.succeeded, let value = result.value { data = value.bytes }
        }
        client.write(WebSocketFrameWriter.frame(opcode: UInt8(message.opcode), payload: data, mask: nil))
        toClient += 1
        bytesToClient += data.count
        counters?.message(toClient: true)
    }

    // MARK: the client

    private func clientInput(_ bytes: UnsafeRawBufferPointer) {
        guard !ended else { return }
        lastFrame = pipeline.clock.now()
        do throws(WebSocketViolation) {
            try reader.feed(bytes) { frame in handle(frame) }
        } catch {
            closeCode = error.closeCode
            client.write(WebSocketClose.frame(code: error.closeCode, reason: "the client: " + error.reason, mask: nil))
            finish(label: error.closeCode == WebSocketClose.tooBig ? "websocket_message_too_big" : "websocket_protocol_error",
                   error: error.reason)
        }
    }

    private func handle(_ frame: WebSocketFrame) {
        guard !ended else { return }
        switch frame.opcode {
        case WebSocketOpcode.close:
            // The recording's upstream is this replay: it answers the close itself.
            closeCode = frame.closeCode
            let code = frame.closeCode == WebSocketClose.noStatus ? WebSocketClose.normal : frame.closeCode
            client.write(WebSocketClose.frame(code: code, reason: "", mask: nil))
            finish(label: "ok", error: nil)
        case WebSocketOpcode.ping:
            client.write(WebSocketFrameWriter.frame(opcode: WebSocketOpcode.pong, payload: frame.payload, mask: nil))
        case WebSocketOpcode.pong:
            break
        default:
            bytesToUpstream += frame.payloadCount
            guard frame.fin else { return }
            toUpstream += 1
            counters?.message(toClient: false)
            // The client's message stands for the recorded one at this point: what the
            // upstream answered to it follows.
            leading = false
            if next < messages.count, messages[next].sent {
                next += 1
                previousTime = messages[next - 1].time
                release()
            }
        }
    }

    // MARK: time and the end

    private func armIdle(_ seconds: Double) {
        if idle == nil { idle = pipeline.makeTimer?({ [weak self] in self?.idleCheck() }) }
        idle?.schedule(after: seconds)
    }

    private func idleCheck() {
        guard !ended else { return }
        let quiet = pipeline.clock.now() - lastFrame
        if quiet < route.websocket.idle { return armIdle(route.websocket.idle - quiet) }
        closeCode = WebSocketClose.goingAway
        client.write(WebSocketClose.frame(code: WebSocketClose.goingAway, reason: "no frame for the idle time (websocket.idle)", mask: nil))
        finish(label: "websocket_idle", error: "no frame for \(ProxyFailure.seconds(route.websocket.idle)) s (websocket.idle)")
    }

    private func finish(label: String, error: String?) {
        guard !ended else { return }
        ended = true
        timer?.cancel()
        timer = nil
        idle?.cancel()
        idle = nil
        client.endStream()
        counters?.closed()
        pipeline.openWebSockets[ObjectIdentifier(self)] = nil
        let duration = pipeline.clock.now() - context.started
        context.streamSummary = summary(duration: duration)
        context.recorder.record(context, status: 101, bytesOut: bytesToClient,
                                outcome: .init(label: label, serializer: nil, reply: nil, error: error, upstreamBytes: 0),
                                duration: duration, responseContentType: nil)
        context.webSocketReplay = nil
    }

    /// The daemon stops: the client gets 1001, as from a relay.
    func shutdown() {
        guard !ended else { return }
        closeCode = WebSocketClose.goingAway
        client.write(WebSocketClose.frame(code: WebSocketClose.goingAway, reason: "the server is stopping", mask: nil))
        finish(label: "unavailable", error: "the server is stopping")
    }

    func progress(now: Double) -> TransferProgress {
        TransferProgress(tag: UpstreamRequest.Tag(requestID: context.requestID, route: route.name, method: "GET", path: context.path),
                         started: context.started, bytesUp: bytesToUpstream, bytesDown: bytesToClient, totalUp: nil, totalDown: nil,
                         stream: summary(duration: now - context.started))
    }

    private func summary(duration: Double) -> String {
        WebSocketRelay.summary(toClient: toClient, toUpstream: toUpstream, bytesToClient: bytesToClient, bytesToUpstream: bytesToUpstream,
                               closeCode: closeCode, duration: duration)
    }
}
