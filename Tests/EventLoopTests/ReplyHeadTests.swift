@testable import EventLoop
import Testing

@Suite struct ReplyHeadTests {
    @Test func aValueCannotSplitTheResponse() {
        var head = ReplyHead(status: 200, capacity: 64)
        head.add("X-Upstream", "a\r\nSet-Cookie: evil\u{0}")
        head.addContentLength(12)
        head.end()
        #expect(String(decoding: head.bytes, as: UTF8.self)
            == "HTTP/1.1 200 OK\r\nX-Upstream: a  Set-Cookie: evil \r\nContent-Length: 12\r\n\r\n")
    }

    @Test func controlBytesAreFoundAtEveryOffsetOfEveryLength() {
        for length in 0...20 {
            for at in 0..<max(length, 1) {
                for c in [UInt8(0x00), 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x7F, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    if length > 0 { bytes[at] = c }
                    let naive = bytes.contains { $0 < 0x20 }
                    #expect(bytes.withUnsafeBufferPointer(ReplyHead.hasControl) == naive, "length \(length) at \(at) byte \(c)")
                }
            }
        }
    }

    @Test func theBodyFollowsTheHeadInOneBuffer() {
        var head = ReplyHead(status: 404, capacity: 16)
        head.addContentLength(2)
        head.end()
        #expect(String(decoding: head.take(appending: Array("{}".utf8)), as: UTF8.self)
            == "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}")
    }
}
