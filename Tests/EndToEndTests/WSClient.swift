import Foundation
import TestSupport

/// A WebSocket client over one raw connection: masked frames out, frames in.
final class WSClient {
    let connection: RawConnection
    let key: String
    private(set) var head = ""

    struct Frame {
        let fin: Bool
        let opcode: UInt8
        let payload: [UInt8]
        var text: String { String(decoding: opcode == 8 ? Array(payload.dropFirst(2)) : payload, as: UTF8.self) }
        var closeCode: Int? { payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil }
    }

    init(_ port: Int, _ target: String, extra: String = "", expectSwitch: Bool = true, receiveBuffer: Int32? = nil) throws {
        connection = try RawConnection(port: port, receiveBuffer: receiveBuffer)
        key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        connection.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n")
        if expectSwitch { try finishHandshake() }
    }

    /// Reads the 101 (for a client made with `expectSwitch: false`, after all were sent).
    func finishHandshake() throws {
        let raw = connection.read { RawHTTP.find([13, 10, 13, 10], in: $0) != nil }
        guard let end = RawHTTP.find([13, 10, 13, 10], in: raw) else { throw TestFailure("no handshake answer: \(String(decoding: raw, as: UTF8.self))") }
        head = String(decoding: raw[..<(end + 4)], as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 101") else { throw TestFailure("not switched: \(head)") }
        consumed = end + 4
    }

    private var consumed = 0

    func header(_ name: String) -> String? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    static func accept(_ key: String) -> String {
        let run = try? ServerBinary.run(["dgst", "-sha1", "-binary"], stdin: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8),
                                        executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        return Data(run?.stdout ?? []).base64EncodedString()
    }

    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        connection.send(out)
    }

    /// The next frame from the daemon, nil at the deadline or the connection's end.
    func next(timeout: Double = 5) -> Frame? {
        let start = consumed
        let bytes = connection.read(timeout: timeout) { Self.parse($0[start...]) != nil }
        guard let (frame, length) = Self.parse(bytes[start...]) else { return nil }
        consumed += length
        return frame
    }

    static func parse(_ slice: ArraySlice<UInt8>) -> (Frame, Int)? {
        // Read in place: a flood's frames come from a buffer that keeps growing.
        let bytes = SliceReader(slice)
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F), at = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            at = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[$1]) }
            at = 10
        }
        guard bytes.count >= at + length else { return nil }
        let start = slice.startIndex + at
        return (Frame(fin: bytes[0] & 0x80 != 0, opcode: bytes[0] & 0x0F, payload: Array(slice[start..<(start + length)])), at + length)
    }
}

/// A slice read by offsets from its start.
struct SliceReader {
    let slice: ArraySlice<UInt8>
    init(_ slice: ArraySlice<UInt8>) { self.slice = slice }
    var count: Int { slice.count }
    subscript(_ k: Int) -> UInt8 { slice[slice.startIndex + k] }

}
