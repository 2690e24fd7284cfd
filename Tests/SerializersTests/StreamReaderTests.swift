@testable import Serializers
import Testing

/// The SSE event parser and the NDJSON record splitter (DESIGN §9).
@Suite struct StreamReaderTests {
    func events(_ text: String, maxEvent: Int = 1 << 20, bytewise: Bool = false) -> [EventStreamParser.Item] {
        var parser = EventStreamParser(maxEvent: maxEvent), items: [EventStreamParser.Item] = []
        let bytes = Array(text.utf8)
        for piece in bytewise ? bytes.map { [$0] } : [bytes] { piece.withUnsafeBytes { parser.feed($0) { items.append($0) } } }
        return items
    }

    @Test func fieldsCommentsAndEveryLineEnding() {
        let items = events(": hi\r\nid: 7\revent: tick\ndata: a\r\ndata:b\n\nretry: x\ndata\n\n")
        #expect(items == [.comment(Array(" hi".utf8)),
                          .event(.init(data: Array("a\nb".utf8), event: Array("tick".utf8), id: Array("7".utf8))),
                          .event(.init(data: []))])
        #expect(events("data: a\r\n\r\ndata: b\r\r", bytewise: true) == events("data: a\n\ndata: b\n\n"))
    }

    @Test func anUnfinishedEventIsNotDispatchedAndALongOneIsSkipped() {
        #expect(events("data: never ended\n").isEmpty)
        let long = "data: " + String(repeating: "x", count: 100) + "\n\ndata: ok\n\n"
        #expect(events(long, maxEvent: 50) == [.tooLong, .event(.init(data: Array("ok".utf8)))])
        // The whole block is skipped, not only its long line, however the bytes arrive.
        let block = "data: " + String(repeating: "x", count: 100) + "\ndata: tail\n\ndata: ok\n\n"
        #expect(events(block, maxEvent: 50) == [.tooLong, .event(.init(data: Array("ok".utf8)))])
        #expect(events(block, maxEvent: 50, bytewise: true) == events(block, maxEvent: 50))
    }

    @Test func recordsSplitOnLinesOrRecordSeparators() {
        func split(_ text: String, sequence: Bool, max: Int = 100) -> [[UInt8]?] {
            var splitter = RecordSplitter(maxRecord: max, sequence: sequence), out: [[UInt8]?] = []
            Array(text.utf8).withUnsafeBytes { splitter.feed($0) { out.append($0) } }
            splitter.finish { out.append($0) }
            return out
        }
        #expect(split("{\"a\":1}\r\n\n {\"b\":2}", sequence: false) == [Array("{\"a\":1}".utf8), Array("{\"b\":2}".utf8)])
        #expect(split("\u{1E}1\n\u{1E}2\u{1E}3", sequence: true) == [[0x31], [0x32], [0x33]])
        #expect(split(String(repeating: "y", count: 10) + "\nz\n", sequence: false, max: 5) == [nil, [0x7A]])
    }
}
