@testable import EventLoop
import HTTPCore
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

    /// The head after `fields`, written whole when `addVerbatim` takes them, else field by field.
    static func written(_ fields: HeaderFields, verbatim: Bool) -> (taken: Bool, bytes: [UInt8]) {
        var head = ReplyHead(status: 200, capacity: 8)
        var taken = false
        if verbatim { taken = head.addVerbatim(fields) != nil }
        if !taken { fields.forEach { head.add(name: $0, value: $1) } }
        return (taken, head.bytes)
    }

    @Test func builtFieldsAreCopiedWholeAsFieldByFieldWouldWriteThem() {
        var fields = HeaderFields()
        for k in 0..<40 { fields.append("X-Field-\(k)", String(repeating: "v", count: k) + " é") }
        let whole = Self.written(fields, verbatim: true)
        #expect(whole.taken && whole.bytes == Self.written(fields, verbatim: false).bytes)
        #expect(Self.written(HeaderFields(), verbatim: true).taken)
    }

    @Test func anythingElseIsLeftToTheFieldByFieldWriter() {
        let refused = [
            "Connection: close\r\n", "X: 1\r\nconnection: close\r\n", "DATE: x\r\n",
            "Date: Mon, 01 Jan 2001 00:00:00 GMT\r\nDate: Mon, 01 Jan 2001 00:00:00 GMT\r\n",
            "X: a\nY: b\r\n", "X: a\rb\r\n", "X: a\u{0}b\r\n", "X: a\u{1}b\r\n", "X: a\tb\r\n", "no colon\r\n", ": empty name\r\n",
            "X: no line end", "X: 1\r\nY: 2\n", "X: 1\r\n\r\n",
        ]
        for text in refused {
            var head = ReplyHead(status: 200, capacity: 8)
            let before = head.count
            let taken = head.addVerbatim(HeaderFields(lines: Array(text.utf8))) != nil
            #expect(!taken, "\(text.debugDescription)")
            #expect(head.count == before, "\(text.debugDescription) wrote bytes")
        }
        // One valid Date is copied, and said.
        var head = ReplyHead(status: 200, capacity: 8)
        let dated = head.addVerbatim(HeaderFields(lines: Array("X: 1\r\ndate:  Mon, 01 Jan 2001 00:00:00 GMT \r\n".utf8)))
        #expect(dated == true)
        #expect(Self.written(HeaderFields([("X", "1")]), verbatim: true).taken)
        var plain = ReplyHead(status: 200, capacity: 8)
        let undated = plain.addVerbatim(HeaderFields([("X", "1")]))
        #expect(undated == false)
        // Names that only start like the two it reads are copied.
        #expect(Self.written(HeaderFields(lines: Array("Dates: 1\r\nConnection-Id: 2\r\nCache-Status: hit\r\n".utf8)), verbatim: true).taken)
    }

    @Test func aStrayControlByteIsFoundAtEveryOffset() {
        for length in 1...24 {
            for at in 0..<length {
                for c in [UInt8(0x00), 0x01, 0x0A, 0x0D, 0x1F] {
                    var value = [UInt8](repeating: UInt8(ascii: "v"), count: length)
                    value[at] = c
                    var head = ReplyHead(status: 200, capacity: 8)
                    let taken = head.addVerbatim(HeaderFields(lines: Array("X-A: 1\r\nX-Name: ".utf8) + value + [0x0D, 0x0A])) != nil
                    #expect(!taken, "length \(length) at \(at) byte \(c)")
                }
            }
        }
    }
}
