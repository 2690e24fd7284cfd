@testable import HTTPCore
import Testing

/// The one header type: lines as the wire carries them, read without a String per field.
@Suite struct HeaderFieldsTests {
    func fields(_ text: String) -> HeaderFields { HeaderFields(lines: Array(text.utf8)) }

    @Test func linesAsReceivedAreReadAsFields() {
        // CRLF or a bare LF ends a line; a line without a colon, and the empty line, are no field.
        let received = fields("Content-Type: application/json\r\nX-A:  padded \t\r\nno colon here\r\nx-b: 2\n\r\n")
        #expect(received.pairs.map { "\($0.0)=\($0.1)" } == ["Content-Type=application/json", "X-A=padded", "x-b=2"])
        #expect(received.first("content-type") == "application/json")
        #expect(received.first("X-B") == "2" && received.first("X-C") == nil)
    }

    @Test func appendedFieldsAreWireLines() {
        var made = HeaderFields([("A", "1")])
        made.append("Via", "1.1 serializerd-x")
        made.append("Empty", "")
        #expect(String(decoding: made.bytes, as: UTF8.self) == "A: 1\r\nVia: 1.1 serializerd-x\r\nEmpty: \r\n")
        #expect(made.pairs.map(\.1) == ["1", "1.1 serializerd-x", ""])
        made.append(contentsOf: HeaderFields([("B", "2")]))
        made.remove("a")
        #expect(made.pairs.map(\.0) == ["Via", "Empty", "B"])
        #expect(made == HeaderFields([("Via", "1.1 serializerd-x"), ("Empty", ""), ("B", "2")]))
    }

    @Test func aValueIsStoredWithoutSurroundingWhitespace() {
        // RFC 9110 §5.5: the spaces are not part of the value, so fields given with them
        // equal fields given without (a tape reads back as it was written).
        let spaced = HeaderFields([("X", " y \t"), ("Z", "\t")])
        #expect(String(decoding: spaced.bytes, as: UTF8.self) == "X: y\r\nZ: \r\n")
        #expect(spaced == HeaderFields([("X", "y"), ("Z", "")]))
    }

    @Test func endToEndLeavesOutWhatConnectionNames() {
        let received = fields("Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nCache-Control: max-age=60\r\nX-Keep: 2\r\n")
        var forwarded = HeaderFields([("First", "0")])
        received.appendEndToEnd(where: { !HeaderNames.isConnection($0) }, to: &forwarded)
        #expect(forwarded.pairs.map(\.0) == ["First", "Cache-Control", "X-Keep"])
        // Without a Connection field naming one, every accepted field is kept, in order.
        var all = HeaderFields()
        fields("A: 1\r\nB: 2\r\n").appendEndToEnd(where: { _ in true }, to: &all)
        #expect(all.pairs.map(\.0) == ["A", "B"])
    }

    @Test func namesAreLookedUpInAnyCase() {
        let made = HeaderFields([("Idempotency-Key", "k1"), ("ETag", "\"v\"")])
        #expect(made.contains(any: HeaderNames(["idempotency-key"])))
        #expect(!made.contains(any: HeaderNames(["etags"])))
        #expect(made.first("etag") == "\"v\"")
    }

    @Test func theFirstFieldOfANameAndEveryValueOfIt() {
        let made = HeaderFields(lines: Array("Vary: a\r\nCache-Control: max-age=1\r\nX: y\r\ncache-control:  no-store \r\n".utf8))
        #expect(made.first("CACHE-CONTROL") == "max-age=1")
        #expect(made.withFirst("cache-control") { $0.count } == 9)
        #expect(made.withFirst("missing") { _ in true } == nil)
        #expect(made.values("Cache-Control") == ["max-age=1", "no-store"])
        #expect(made.values("missing").isEmpty)
        // The body runs once, for the first of the two Cache-Control fields.
        var visits = 0
        _ = made.withFirst("cache-control") { _ in visits += 1 }
        #expect(visits == 1)
    }
}
