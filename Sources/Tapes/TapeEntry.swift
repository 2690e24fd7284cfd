import HTTPCore
#if canImport(Telemetry)
import Telemetry
#endif

/// One recorded upstream exchange: the request serializerd sent (after the request
/// serializer and the route's headers) and what the upstream answered, as the tape keeps
/// it — already redacted by `capture`.
public struct TapeEntry: Sendable, Equatable {
    public var request: TapeRequest
    public var status: Int
    /// The response's header fields as received, in order.
    public var responseHeaders: HeaderFields
    public var responseBody: [UInt8]
    /// When the exchange started (HAR's startedDateTime), seconds since the Unix epoch.
    public var startedAt: Double
    /// How long the upstream took, in seconds.
    public var duration: Double
    /// A streamed answer's timing (`_serializerd.chunks`): when each piece of the body
    /// arrived after the head; nil for an answer recorded whole.
    public var chunks: [StreamChunk]?
    /// A WebSocket's messages both ways (Chrome's `_webSocketMessages`); nil for others.
    public var messages: [WebSocketMessage]?

    public init(request: TapeRequest, status: Int, responseHeaders: HeaderFields, responseBody: [UInt8],
                startedAt: Double, duration: Double, chunks: [StreamChunk]? = nil, messages: [WebSocketMessage]? = nil) {
        self.chunks = chunks
        self.messages = messages
        self.request = request
        self.status = status
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.startedAt = startedAt
        self.duration = duration
    }

    /// The exchange as a tape may keep it: `capture`'s headers, query parameters and JSON
    /// or form members replaced by `[redacted]` (DESIGN §2, §6).
    public func redacted(by capture: Redaction) -> TapeEntry {
        var copy = self
        let requestType = request.headers.first("Content-Type")
        copy.request = TapeRequest(method: request.method, url: capture.url(request.url), headers: capture.headers(request.headers),
                                   body: capture.body(request.body, contentType: requestType) ?? request.body)
        copy.responseHeaders = capture.headers(responseHeaders)
        copy.messages = messages?.map { m in
            guard m.opcode == 1, let redacted = capture.body(m.data, contentType: "application/json") else { return m }
            return WebSocketMessage(sent: m.sent, time: m.time, opcode: m.opcode, data: redacted)
        }
        if let chunks {
            (copy.responseBody, copy.chunks) = StreamRedaction.redact(responseBody, chunks: chunks, capture: capture, contentType: contentType)
        } else {
            copy.responseBody = capture.body(responseBody, contentType: contentType) ?? responseBody
        }
        return copy
    }

    /// The response's Content-Type field, if it sent one.
    public var contentType: String? { responseHeaders.first("Content-Type") }

    public static func == (a: TapeEntry, b: TapeEntry) -> Bool {
        a.request == b.request && a.status == b.status && a.responseBody == b.responseBody
            && a.responseHeaders == b.responseHeaders && a.startedAt == b.startedAt && a.duration == b.duration && a.chunks == b.chunks
            && a.messages == b.messages
    }
}

/// One WebSocket message as HAR keeps it: `sent` by the client (`type: send`) or
/// received from the upstream, when (wall-clock seconds), its opcode (1 text, 2 binary).
public struct WebSocketMessage: Sendable, Equatable {
    public let sent: Bool
    public let time: Double
    public let opcode: Int
    public let data: [UInt8]

    public init(sent: Bool, time: Double, opcode: Int, data: [UInt8]) {
        self.sent = sent
        self.time = time
        self.opcode = opcode
        self.data = data
    }
}

/// One piece of a streamed answer: `milliseconds` after the head, the body from `offset` on.
public struct StreamChunk: Sendable, Equatable {
    public let milliseconds: Int
    public let offset: Int

    public init(milliseconds: Int, offset: Int) {
        self.milliseconds = milliseconds
        self.offset = offset
    }
}

/// An upstream request as matching sees it.
public struct TapeRequest: Sendable, Equatable {
    public var method: String
    /// The absolute upstream URL (`http://host/path?query`).
    public var url: String
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(method: String, url: String, headers: HeaderFields, body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The path and the query (without `?`; nil when the URL has none), scheme and
    /// authority dropped: a tape recorded against staging replays for the same paths.
    public var pathAndQuery: (path: Substring, query: Substring?) {
        // On the UTF-8 view: every delimiter is ASCII, and this runs on each replay.
        let bytes = url.utf8
        var start = bytes.startIndex
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), !bytes[..<colon].contains(UInt8(ascii: "/")),
           bytes[colon...].starts(with: "://".utf8) {
            let authority = bytes.index(colon, offsetBy: 3)
            start = bytes[authority...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
        }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        guard let question = bytes[start..<end].firstIndex(of: UInt8(ascii: "?")) else {
            return (start == end ? "/" : url[start..<end], nil)
        }
        return (start == question ? "/" : url[start..<question], url[bytes.index(after: question)..<end])
    }

    public static func == (a: TapeRequest, b: TapeRequest) -> Bool {
        a.method == b.method && a.url == b.url && a.body == b.body && a.headers == b.headers
    }
}
