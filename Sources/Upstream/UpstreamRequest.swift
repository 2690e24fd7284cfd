import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// One request for the upstream, fully resolved by the proxy.
public struct UpstreamRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: HeaderLines
    public var body: [UInt8]
    public var timeout: Double
    public var connectTimeout: Double
    public var followRedirects: Int
    public var maxResponseBytes: Int

    public init(url: String, method: String, headers: HeaderLines, body: [UInt8], timeout: Double,
                connectTimeout: Double, followRedirects: Int, maxResponseBytes: Int) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.maxResponseBytes = maxResponseBytes
    }
}

/// Request header lines as libcurl takes them (`Name: value`, each NUL-terminated), in
/// one buffer: built from the client's header bytes without a String per header.
public struct HeaderLines: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        if bytes.capacity == 0 { bytes.reserveCapacity(512) }
        bytes.append(contentsOf: name)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: value)
        bytes.append(0)
    }

    public mutating func append(_ name: StaticString, value: UnsafeBufferPointer<UInt8>) {
        name.withUTF8Buffer { append(name: $0, value: value) }
    }

    public mutating func append(_ name: String, _ value: String) {
        var name = name, value = value
        name.withUTF8 { name in value.withUTF8 { append(name: name, value: $0) } }
    }
}

/// The upstream's final response (after any redirects), body decoded.
public struct UpstreamReply: Sendable {
    public var status: Int
    public var headers: UpstreamHeaders
    public var contentType: String?
    public var body: [UInt8]
    public var url: String
}

/// Why no response came back.
public enum UpstreamFailure: Error, Sendable, Equatable {
    /// Refused, reset, DNS, TLS…: libcurl's CURLcode and its message.
    case unavailable(code: Int, message: String)
    case timeout
    case bodyTooLarge(limit: Int)
    /// The transfer was abandoned (shutdown).
    case aborted
    /// The process's buffer budget (`limits.max_buffered_bytes`) had no room for the body.
    case overloaded
}

extension UpstreamFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unavailable(_, let message): message
        case .timeout: "no complete response within the timeout"
        case .bodyTooLarge(let limit): "the response is larger than \(limit) bytes"
        case .aborted: "the transfer was abandoned"
        case .overloaded: "the server's buffer budget has no room for this response"
        }
    }
}

/// The final response's header lines as received ("Name: value", CRLF-terminated),
/// parsed only when asked: a normalized reply forwards two or three of them, so the
/// rest never become Strings.
public struct UpstreamHeaders: Sendable {
    var lines: [UInt8]

    public init(lines: [UInt8] = []) { self.lines = lines }

    /// The fields (name as sent, value without surrounding whitespace) whose raw name
    /// `keep` accepts, in order.
    public func fields(where keep: (UnsafeBufferPointer<UInt8>) -> Bool) -> [(String, String)] {
        var result: [(String, String)] = []
        appendFields(where: keep, to: &result)
        return result
    }

    /// The same, appended to `result`.
    public func appendFields(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout [(String, String)]) {
        lines.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return }
            var lineStart = 0
            while lineStart < all.count {
                let lineEnd = memchr(base + lineStart, 0x0A, all.count - lineStart)
                    .map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? all.count
                defer { lineStart = lineEnd + 1 }
                guard let found = memchr(base + lineStart, Int32(UInt8(ascii: ":")), lineEnd - lineStart) else { continue }
                let colon = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
                let name = UnsafeBufferPointer(rebasing: all[lineStart..<colon])
                guard keep(name) else { continue }
                var start = colon + 1, end = lineEnd
                while start < end && (all[start] == 0x20 || all[start] == 0x09) { start += 1 }
                while end > start && (all[end - 1] == 0x20 || all[end - 1] == 0x09 || all[end - 1] == 0x0D) { end -= 1 }
                result.append((String(decoding: name, as: UTF8.self),
                               String(decoding: UnsafeBufferPointer(rebasing: all[start..<end]), as: UTF8.self)))
            }
        }
    }

    /// Every field, in order.
    public var all: [(String, String)] { fields { _ in true } }

    /// The fields the response's Connection header names (hop-by-hop, never forwarded).
    public var connectionOptions: HeaderNames {
        var named = HeaderNames([])
        for (_, value) in fields(where: HeaderNames.connection.contains) { named.addConnectionOptions(value.utf8) }
        return named
    }
}
