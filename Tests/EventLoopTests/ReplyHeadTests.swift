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
}
