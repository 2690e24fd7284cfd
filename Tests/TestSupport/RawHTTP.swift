import Foundation

/// A deliberately small HTTP/1.1 client over a real loopback socket, so tests control
/// the exact request line (absolute-form, CONNECT, odd methods) and see raw replies.
public struct RawResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.last { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public enum RawHTTP {
    /// Sends one request with `Connection: close` and reads the whole reply (bounded).
    /// `host` replaces the Host field's value (`127.0.0.1:PORT`).
    public static func request(port: Int, method: String = "GET", target: String, headers: [(String, String)] = [],
                               body: [UInt8] = [], host: String? = nil, timeout: Double = 20) throws -> RawResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let raw = try exchange(port: port, bytes: Array(head.utf8) + body, timeout: timeout, bodyless: method == "HEAD" || method == "CONNECT")
        return try parse(raw, method: method)
    }

    /// The same exchange read until the daemon closes the connection: `extra` is the
    /// number of bytes after the first reply's end (where a second reply would be).
    public static func requestReadingToClose(port: Int, target: String, timeout: Double = 20) throws -> (RawResponse, extra: Int) {
        let head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let raw = try exchange(port: port, bytes: Array(head.utf8), timeout: timeout, untilClose: true)
        let response = try parse(raw, method: "GET")
        guard let end = find([13, 10, 13, 10], in: raw), let length = response.header("Content-Length").flatMap(Int.init) else {
            throw TestFailure("a reply without Content-Length: \(String(decoding: raw, as: UTF8.self))")
        }
        return (response, raw.count - (end + 4 + length))
    }

    /// A connected TCP socket to 127.0.0.1:`port` whose reads give up after `timeout`;
    /// `receiveBuffer` shrinks SO_RCVBUF before connecting (a slow reader).
    public static func connect(port: Int, timeout: Double, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        // Whole seconds and microseconds: a zero timeval would mean "wait forever".
        var tv = timeval(tv_sec: Int(timeout), tv_usec: max(1, Int((timeout - timeout.rounded(.down)) * 1_000_000)))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("connect to 127.0.0.1:\(port) failed")
        }
        return fd
    }

    /// `untilClose`: read until the peer closes, not just to the end of the first reply.
    public static func exchange(port: Int, bytes: [UInt8], timeout: Double, bodyless: Bool = false, untilClose: Bool = false) throws -> [UInt8] {
        let fd = try connect(port: port, timeout: timeout)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply += chunk[0..<n]
            if !untilClose && isComplete(reply, bodyless: bodyless) { break }
        }
        return reply
    }

    /// A whole response has arrived: by Content-Length, the chunked terminator, or no body.
    static func isComplete(_ reply: [UInt8], bodyless: Bool) -> Bool {
        guard let end = find([13, 10, 13, 10], in: reply) else { return false }
        let head = String(decoding: reply[..<end], as: UTF8.self).lowercased()
        let bodyBytes = reply.count - end - 4
        if bodyless || head.hasPrefix("http/1.1 204") || head.hasPrefix("http/1.1 304") { return true }
        if let range = head.range(of: "\r\ncontent-length:") {
            let digits = head[range.upperBound...].prefix { $0 == " " || $0.isNumber }.filter(\.isNumber)
            return Int(digits).map { bodyBytes >= $0 } ?? false
        }
        if head.contains("transfer-encoding: chunked") { return find(Array("0\r\n\r\n".utf8), in: Array(reply[(end + 4)...])) != nil }
        return false
    }

    static func parse(_ raw: [UInt8], method: String) throws -> RawResponse {
        guard let end = find([13, 10, 13, 10], in: raw) else { throw TestFailure("incomplete reply: \(String(decoding: raw, as: UTF8.self))") }
        let head = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = head.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else { throw TestFailure("bad status line") }
        var headers: [(String, String)] = []
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(raw[(end + 4)...])
        if let length = headers.last(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }), body.count > length {
            body = Array(body[..<length])
        }
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased() == "chunked" }) {
            body = dechunk(body)
        }
        return RawResponse(status: status, headers: headers, body: body)
    }

    public static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while let lineEnd = find([13, 10], in: Array(bytes[i...])) {
            let size = Int(String(decoding: bytes[i..<(i + lineEnd)], as: UTF8.self), radix: 16) ?? 0
            i += lineEnd + 2
            if size == 0 { break }
            out += bytes[i..<min(bytes.count, i + size)]
            i += size + 2
        }
        return out
    }
}
