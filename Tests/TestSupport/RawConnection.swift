import Foundation

/// One client connection driven byte by byte: for pipelining, half-closes, trickled
/// heads and replies that must be read exactly as sent.
public final class RawConnection: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var closedByPeer = false

    public init(port: Int, timeout: Double = 10, receiveBuffer: Int32? = nil) throws {
        fd = try RawHTTP.connect(port: port, timeout: timeout, receiveBuffer: receiveBuffer)
    }

    deinit { Glibc.close(fd) }

    /// False when the daemon has closed (or reset) the connection.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until `done` holds for what arrived, the peer closes, or `timeout` passes.
    @discardableResult
    public func read(timeout: Double = 5, until done: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !done(buffer), !closedByPeer, Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { closedByPeer = true } else { buffer += chunk[0..<n] }
        }
        return buffer
    }

    /// One byte, as a client that reads slowly takes it; nil after `timeout` or at the end.
    public func readByte(timeout: Double = 5) -> UInt8? {
        if !buffer.isEmpty { return buffer.removeFirst() }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var byte: UInt8 = 0
        guard recv(fd, &byte, 1, 0) == 1 else {
            closedByPeer = true
            return nil
        }
        return byte
    }

    /// Reads until the daemon closes the connection (or `timeout`); true if it closed.
    public func waitForClose(timeout: Double = 5) -> Bool {
        _ = read(timeout: timeout)
        return closedByPeer
    }

    /// The next whole response (Content-Length framed), removed from what was read.
    public func response(timeout: Double = 5, bodyless: Bool = false) throws -> RawResponse {
        let raw = read(timeout: timeout) { RawConnection.firstLength($0, bodyless: bodyless) != nil }
        guard let length = RawConnection.firstLength(raw, bodyless: bodyless) else {
            throw TestFailure("no complete response: \(String(decoding: raw, as: UTF8.self))")
        }
        let response = try RawHTTP.parse(Array(raw[0..<length]), method: bodyless ? "HEAD" : "GET")
        buffer.removeFirst(length)
        return response
    }

    /// Everything read and not yet taken by `response`.
    public var unread: [UInt8] { buffer }

    /// The length of the first complete Content-Length-framed response in `bytes`.
    static func firstLength(_ bytes: [UInt8], bodyless: Bool) -> Int? {
        guard let end = RawHTTP.find([13, 10, 13, 10], in: bytes) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        var length = 0
        if !bodyless, let range = head.range(of: "\r\ncontent-length:") {
            length = Int(head[range.upperBound...].prefix { $0 == " " || $0.isNumber }.filter(\.isNumber)) ?? 0
        }
        return bytes.count >= end + 4 + length ? end + 4 + length : nil
    }
}

extension RawResponse {
    /// How many status lines a raw byte stream holds (a smuggled request would add one).
    public static func statusLineCount(_ bytes: [UInt8]) -> Int {
        let text = String(decoding: bytes, as: UTF8.self)
        return (text.hasPrefix("HTTP/1.1 ") ? 1 : 0) + text.components(separatedBy: "\nHTTP/1.1 ").count - 1
    }
}
