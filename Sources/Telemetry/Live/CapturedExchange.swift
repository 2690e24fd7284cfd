import HTTPCore

/// What `/-/recent?format=har` shows of a request beyond its completion event: the
/// client's request and the answer it got, and the upstream exchange behind that answer
/// (so a captured flow can become a tape entry). Held as the exchange had it — the
/// buffers it already owned, referenced rather than copied — and redacted by `capture`
/// whenever it is shown. A body over `bodyLimit` is not held (its size is).
public final class CapturedExchange: Sendable {
    /// The largest body held, each.
    public static let bodyLimit = 64 << 10

    /// A body, or only its size when it is over the limit.
    public struct Body: Sendable {
        public let bytes: [UInt8]?
        public let count: Int

        public init(_ bytes: [UInt8]) {
            self.bytes = bytes.count <= CapturedExchange.bodyLimit ? bytes : nil
            count = bytes.count
        }
    }

    /// The upstream exchange (or the tape entry, or the mock answer, that stood for it).
    public struct Upstream: Sendable {
        public let method: String
        public let url: String
        /// `Name: value` lines, each ended by CRLF (HeaderFields' bytes, as sent).
        public let requestLines: [UInt8]
        public let requestBody: Body
        public let status: Int
        /// `Name: value` lines ended by CRLF, as received.
        public let responseLines: [UInt8]
        public let responseBody: Body

        public init(method: String, url: String, requestLines: [UInt8], requestBody: [UInt8], status: Int,
                    responseLines: [UInt8], responseBody: [UInt8]) {
            self.method = method
            self.url = url
            self.requestLines = requestLines
            self.requestBody = Body(requestBody)
            self.status = status
            self.responseLines = responseLines
            self.responseBody = Body(responseBody)
        }
    }

    /// The request target as the client sent it (path and query).
    public let target: String
    /// The client's request head as received (request line, fields, empty line).
    public let head: [UInt8]
    public let requestBody: Body
    /// The fields of the answer the client got.
    public let responseHeaders: HeaderFields
    public let responseBody: Body
    public let upstream: Upstream?

    public init(target: String, head: [UInt8], requestBody: [UInt8], responseHeaders: HeaderFields,
                responseBody: [UInt8], upstream: Upstream?) {
        self.target = target
        self.head = head
        self.requestBody = Body(requestBody)
        self.responseHeaders = responseHeaders
        self.responseBody = Body(responseBody)
        self.upstream = upstream
    }

    /// The client's header fields, `Host` left out: the HAR names serializerd as
    /// configured, never the client's Host (DESIGN §6).
    public var requestFields: [(String, String)] {
        guard let firstLine = head.firstIndex(of: 0x0A) else { return [] }
        return HeaderFields(lines: Array(head[(firstLine + 1)...])).pairs(where: { !HeaderNames.equalsIgnoringCase($0, "host") })
    }
}
