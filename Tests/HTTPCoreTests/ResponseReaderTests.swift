import HTTPCore
import Testing

@Suite struct ResponseReaderTests {
    static func read(_ text: String, split: Int = 1 << 20, end: Bool = false, maxBody: Int = 1 << 20) throws(ResponseReader.Failure) -> ResponseReader.Event {
        var reader = ResponseReader(maxHead: 1024, maxBody: maxBody)
        let bytes = Array(text.utf8)
        var event = ResponseReader.Event.needMore
        var at = 0
        while at < bytes.count {
            event = try reader.feed(Array(bytes[at..<min(bytes.count, at + split)]))
            at += split
            if event != .needMore { return event }
        }
        return end ? try reader.feed([], end: true) : event
    }

    @Test func a101LeavesWhatFollowsItsHead() throws {
        for split in [1, 7, 1000] {
            let event = try Self.read("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\u{81}\u{0}", split: split)
            guard case .switched(let status, let headers, let rest) = event else { Issue.record("\(event)"); continue }
            #expect(status == 101 && headers.first("Upgrade") == "websocket")
            // What came in the same read as the head, and only that.
            let after: [UInt8] = [0xC2, 0x81, 0x00]
            #expect(split == 1000 ? rest == after : after.starts(with: rest), "\(split): \(rest)")
        }
    }

    @Test func bodiesByLengthChunksOrTheEnd() throws {
        let length = try Self.read("HTTP/1.1 403 No\r\nContent-Length: 5\r\n\r\nhello", split: 3)
        #expect(length == .complete(status: 403, headers: HeaderFields([("Content-Length", "5")]), body: Array("hello".utf8)))
        let chunked = try Self.read("HTTP/1.1 500 X\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n", split: 2)
        guard case .complete(500, _, let body) = chunked else { Issue.record("\(chunked)"); return }
        #expect(body == Array("abcde".utf8))
        let untilClose = try Self.read("HTTP/1.0 404 X\r\n\r\nall of it", end: true)
        guard case .complete(404, _, let rest) = untilClose else { Issue.record("\(untilClose)"); return }
        #expect(rest == Array("all of it".utf8))
        // A 100 Continue first is skipped.
        let continued = try Self.read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 None\r\n\r\n")
        guard case .complete(204, _, let none) = continued else { Issue.record("\(continued)"); return }
        #expect(none.isEmpty)
    }

    @Test func badAnswersAreRefusedWithAReason() {
        let cases: [(String, Bool)] = [
            ("HTTP/2 200 OK\r\n\r\n", false), ("HTTP/1.1 2x0 OK\r\n\r\n", false), ("HTTP/1.1 099 Low\r\n\r\n", false),
            ("HTTP/1.1 200 OK\r\n bad: fold\r\n\r\n", false), ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", false),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false), ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", false),
            ("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", true), ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true),
            ("HTTP/1.1 200", true),
        ]
        for (text, end) in cases {
            #expect(throws: ResponseReader.Failure.self, "\(text)") { try Self.read(text, end: end) }
        }
        #expect(throws: ResponseReader.Failure.bodyTooLarge(limit: 4)) { try Self.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", maxBody: 4) }
        #expect(throws: ResponseReader.Failure.headTooLarge(limit: 1024)) {
            try Self.read("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 2000) + "\r\n\r\n")
        }
    }
}
