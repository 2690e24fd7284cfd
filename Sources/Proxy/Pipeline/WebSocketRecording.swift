import HTTPCore
import Serializers
import Tapes
import Upstream

/// What a recording tape keeps of a WebSocket (DESIGN §9): its messages both ways,
/// reassembled from their frames, with when each was whole; at most `maxBytes` of them
/// (later ones are not kept; the WebSocket goes on).
struct WebSocketRecording {
    static let maxBytes = 8 << 20

    private(set) var messages: [WebSocketMessage] = []
    private var bytes = 0
    /// A message whose fragments are arriving, each way.
    private var sending: (opcode: UInt8, data: [UInt8])?
    private var receiving: (opcode: UInt8, data: [UInt8])?

    mutating func add(_ frame: WebSocketFrame, sent: Bool, now: Double) {
        guard !frame.isControl, bytes + frame.payloadCount <= Self.maxBytes else { return }
        bytes += frame.payloadCount
        var open = sent ? sending : receiving
        if frame.opcode != WebSocketOpcode.continuation { open = (frame.opcode, []) }
        open?.data += frame.payload
        if frame.fin, let whole = open {
            messages.append(WebSocketMessage(sent: sent, time: now, opcode: Int(whole.opcode), data: whole.data))
            open = nil
        }
        if sent { sending = open } else { receiving = open }
    }
}

extension WebSocketRelay {
    /// The conversation onto the route's tape, as one entry: the handshake, the upstream's
    /// 101, and the messages.
    func writeRecording(now: Double) {
        guard let recording, let heard = context.upstreamAnswered else { return }
        self.recording = nil
        let request = UpstreamRequest(url: context.url, method: "GET", headers: HeaderFields(lines: context.upstreamSent?.lines ?? []), body: [],
                                      timeout: route.timeout, connectTimeout: route.connectTimeout, followRedirects: 0, maxResponseBytes: 0)
        let reply = UpstreamResponse(status: 101, headers: upstreamHead, contentType: nil, body: [], url: context.url)
        heard(request, reply, context.startedWall, now - context.started, .init(messages: recording.messages))
    }
}
