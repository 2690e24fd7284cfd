import EventLoop
import Testing

/// What a parser made of a byte stream: the requests it read, and where it stopped.
struct Parsed {
    var heads: [RequestHead] = []
    var bodies: [[UInt8]] = []
    var ended = 0
    var error: HTTPParseError?
    var leftover = 0
}

/// Feeds `input` in pieces of `piece` bytes (the caller keeps what was not consumed, as
/// a connection does) and collects the events.
func parse(_ input: [UInt8], piece: Int = Int.max, maxHead: Int = 8192, maxBody: Int = 1 << 20) -> Parsed {
    var parser = RequestParser(limits: .init(maxHeadBytes: maxHead, maxBodyBytes: maxBody))
    var result = Parsed()
    var buffer: [UInt8] = []
    var offered = 0
    while true {
        if offered < input.count {
            let next = min(input.count, offered + piece)
            buffer += input[offered..<next]
            offered = next
        }
        var progressed = true
        while progressed {
            progressed = false
            do throws(HTTPParseError) {
                let step = try buffer.withUnsafeBufferPointer { buffer throws(HTTPParseError) in try parser.next(buffer) }
                let consumedBytes = Array(buffer[0..<step.consumed])
                buffer.removeFirst(step.consumed)
                switch step.event {
                case .head(let head)?:
                    result.heads.append(head)
                    result.bodies.append([])
                case .body(let range)?:
                    result.bodies[result.bodies.count - 1] += consumedBytes[range]
                case .end?:
                    result.ended += 1
                case nil:
                    break
                }
                progressed = step.consumed > 0 || step.event != nil
            } catch {
                result.error = error
                return result
            }
        }
        if offered >= input.count { break }
    }
    result.leftover = buffer.count
    return result
}

func parse(_ text: String, piece: Int = Int.max, maxHead: Int = 8192, maxBody: Int = 1 << 20) -> Parsed {
    parse(Array(text.utf8), piece: piece, maxHead: maxHead, maxBody: maxBody)
}

func isMalformed(_ parsed: Parsed) -> Bool {
    if case .malformed? = parsed.error { return true }
    return false
}

@Suite struct RequestParserTests {
    @Test func aSimpleRequestIsReadWhateverPiecesItArrivesIn() {
        let text = "GET /api/x?q=1 HTTP/1.1\r\nHost: example\r\nAccept:  text/plain \r\nX-Empty:\r\n\r\n"
        for piece in [1, 2, 3, 7, 1000] {
            let parsed = parse(text, piece: piece)
            #expect(parsed.error == nil && parsed.ended == 1 && parsed.leftover == 0, "piece \(piece)")
            let head = parsed.heads.first
            #expect(head?.method == "GET" && head?.target == "/api/x?q=1")
            #expect(head?.fields.first("accept") == "text/plain")
            #expect(head?.fields.first("X-EMPTY") == "")
            #expect(head?.fields.first("missing") == nil)
            #expect(head?.keepAlive == true && head?.framing == RequestHead.Framing.none)
        }
    }

    @Test func bodiesAreFramedByLengthOrChunksInAnyPieces() {
        let length = "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world"
        let chunked = "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;name=\"v\"\r\n world\r\n0\r\nX-T: 1\r\n\r\n"
        for piece in [1, 4, 1000] {
            for text in [length, chunked] {
                let parsed = parse(text + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n", piece: piece)
                #expect(parsed.error == nil, "\(text.debugDescription) piece \(piece): \(String(describing: parsed.error))")
                #expect(parsed.bodies.first == Array("hello world".utf8))
                #expect(parsed.ended == 2 && parsed.heads.last?.target == "/next")
            }
        }
    }

    /// Every shape that lets a lenient front end and a back end disagree on where a
    /// request ends (RFC 9112 §6, and the measured cases) is an error.
    @Test(arguments: [
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -5\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x5\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5 5\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;\u{1}\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: 1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-A : 1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n",
        "GET / HTTP/1.1\nHost: h\n\n",
        "GET / HTTP/1.1\r\nHost: h\nX: 1\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / x HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /\u{7F} HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /caf\u{E9} HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: h\r\n\r\n",
        "GET / http/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1 \r\nHost: h\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
        " GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GARBAGE\r\n\r\n",
    ])
    func smugglingAndMalformedShapesAreErrors(_ text: String) {
        for piece in [1, 1000] {
            let parsed = parse(text, piece: piece)
            #expect(isMalformed(parsed), "\(text.debugDescription) piece \(piece): \(parsed.ended) requests, error \(String(describing: parsed.error))")
        }
    }

    @Test func identicalContentLengthsAreOneLength() {
        let parsed = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc")
        #expect(parsed.error == nil && parsed.bodies == [Array("abc".utf8)])
    }

    @Test func aHeadOrTraceBodyIsABodyNotARequest() {
        let inner = "GET /inner HTTP/1.1\r\nHost: h\r\n\r\n"
        for method in ["HEAD", "TRACE", "GET", "DELETE"] {
            let parsed = parse("\(method) / HTTP/1.1\r\nHost: h\r\nContent-Length: \(inner.utf8.count)\r\n\r\n" + inner)
            #expect(parsed.heads.count == 1 && parsed.ended == 1 && parsed.bodies.first == Array(inner.utf8))
        }
    }

    @Test func limitsAreEnforcedWithoutReadingPastThem() {
        let big = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        #expect(parse(big, piece: 10, maxHead: 100).error == .headTooLarge(limit: 100))
        #expect(parse(big, maxHead: 100).error == .headTooLarge(limit: 100))
        // An endless head is refused once it passes the limit, not when it ends.
        let endless = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 100_000)
        #expect(parse(endless, piece: 64, maxHead: 100).error == .headTooLarge(limit: 100))
        // Content-Length over the limit: the head is read, then the body refused at once.
        let declared = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", maxBody: 10)
        #expect(declared.heads.count == 1 && declared.error == .bodyTooLarge(limit: 10))
        let chunks = parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nabcdef\r\n", maxBody: 10)
        #expect(chunks.error == .bodyTooLarge(limit: 10) && chunks.bodies.first == Array("abcdef".utf8))
    }

    @Test func connectionPersistenceFollowsTheVersionAndConnectionHeader() {
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n").heads.first?.keepAlive == false)
        #expect(parse("GET / HTTP/1.0\r\n\r\n").heads.first?.keepAlive == false)
        #expect(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").heads.first?.keepAlive == true)
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n").heads.first?.expectsContinue == true)
    }

    @Test func emptyLinesBeforeARequestAreSkipped() {
        let parsed = parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", piece: 1)
        #expect(parsed.error == nil && parsed.ended == 1)
    }

    @Test func headerBytesAreVisitedInOrderWithoutStrings() {
        let parsed = parse("GET / HTTP/1.1\r\nHost: h\r\nX-One: 1\r\nx-two:2\r\n\r\n")
        var seen: [String] = []
        parsed.heads.first?.fields.forEach { name, value in
            seen.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
        }
        #expect(seen == ["Host=h", "X-One=1", "x-two=2"])
    }

    @Test func theFieldsAreTheHeadsFieldLinesAndHostIsFoundInThem() {
        let parsed = parse("GET / HTTP/1.0\r\nX-A: 1\r\nHost: first.example:81\r\nhost: second\r\n\r\n")
        let head = parsed.heads.first
        #expect(head?.fields.bytes == Array("X-A: 1\r\nHost: first.example:81\r\nhost: second\r\n".utf8))
        #expect(head?.withHost { String(decoding: $0, as: UTF8.self) } == "first.example:81")
        #expect(parse("GET / HTTP/1.0\r\n\r\n").heads.first.map { $0.fields.isEmpty && $0.withHost { _ in true } == nil } == true)
    }
}
