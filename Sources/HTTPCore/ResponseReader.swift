/// An incremental HTTP/1.1 response reader for an upstream spoken to directly (a
/// WebSocket handshake, where libcurl only connects): the status line and fields, then
/// for any status but 101 the body, framed by Content-Length, chunked coding or the
/// connection's end (RFC 9112 §6). The head is bounded by `maxHead`, the body by
/// `maxBody`; 1xx answers other than 101 are skipped.
public struct ResponseReader {
    public enum Event: Equatable {
        /// More bytes are needed.
        case needMore
        /// `101 Switching Protocols`: `rest` is what followed its head (the new protocol's).
        case switched(status: Int, headers: HeaderFields, rest: [UInt8])
        /// Any other whole answer.
        case complete(status: Int, headers: HeaderFields, body: [UInt8])
    }

    public enum Failure: Error, Equatable {
        case malformed(String)
        case headTooLarge(limit: Int)
        case bodyTooLarge(limit: Int)
    }

    public let maxHead: Int
    public let maxBody: Int
    private var input: [UInt8] = []
    private var status = 0
    private var headers = HeaderFields()
    private var framing = Framing.head
    private var body: [UInt8] = []

    private enum Framing: Equatable {
        case head
        case length(Int)
        case chunkSize
        case chunkData(Int)
        case chunkDataEnd
        case trailers
        case untilClose
    }

    public init(maxHead: Int, maxBody: Int) {
        self.maxHead = maxHead
        self.maxBody = maxBody
    }

    /// Bytes as they arrive; `end` when the connection has ended (the end of a
    /// close-delimited body, else a broken answer).
    public mutating func feed(_ bytes: [UInt8], end: Bool = false) throws(Failure) -> Event {
        input += bytes
        while true {
            switch framing {
            case .head:
                guard let lineEnd = Self.headEnd(input) else {
                    // Room for the blank line (CR LF) after a head of `maxHead`.
                    if input.count > maxHead + 2 { throw .headTooLarge(limit: maxHead) }
                    if end { throw .malformed("the upstream closed the connection before its answer's head ended") }
                    return .needMore
                }
                if lineEnd.head > maxHead { throw .headTooLarge(limit: maxHead) }
                try readHead(Array(input[..<lineEnd.head]))
                input.removeFirst(lineEnd.next)
                if status == 101 { return .switched(status: status, headers: headers, rest: input) }
                if status < 200 {
                    headers = HeaderFields()
                    continue
                }
                framing = try bodyFraming()
            case .length(let left):
                let take = min(left, input.count)
                try append(input[..<take])
                input.removeFirst(take)
                if left - take == 0 { return done() }
                framing = .length(left - take)
                if end { throw .malformed("the upstream closed the connection \(left - take) bytes before its answer's end") }
                return .needMore
            case .untilClose:
                try append(input[...])
                input.removeAll()
                return end ? done() : .needMore
            case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
                if let event = try chunked(end: end) { return event }
            }
        }
    }

    /// One step of a chunked body (RFC 9112 §7.1); nil when the next step may run now.
    private mutating func chunked(end: Bool) throws(Failure) -> Event? {
        switch framing {
        case .chunkSize:
            let lf = input.firstIndex(of: 0x0A)
            // The same bound whether the line's end has come or not.
            if (lf ?? input.count) > 1024 { throw .malformed("a chunk-size line is longer than 1024 bytes") }
            guard let lf else { return try needMore(end) }
            let size = try Self.chunkSize(input[..<lf])
            input.removeFirst(lf + 1)
            if body.count + size > maxBody { throw .bodyTooLarge(limit: maxBody) }
            framing = size == 0 ? .trailers : .chunkData(size)
        case .chunkData(let left):
            let take = min(left, input.count)
            try append(input[..<take])
            input.removeFirst(take)
            if left - take > 0 {
                framing = .chunkData(left - take)
                return try needMore(end)
            }
            framing = .chunkDataEnd
        case .chunkDataEnd:
            // CR LF or LF, nothing else: judged on the bytes so far, never held.
            if input.first == 0x0A {
                input.removeFirst(1)
            } else if input.count >= 2, input[0] == 0x0D, input[1] == 0x0A {
                input.removeFirst(2)
            } else if input.isEmpty || input == [0x0D] {
                return try needMore(end)
            } else {
                throw .malformed("a chunk's data is not followed by CRLF")
            }
            framing = .chunkSize
        case .trailers:
            let lf = input.firstIndex(of: 0x0A)
            if (lf ?? input.count) > maxHead { throw .headTooLarge(limit: maxHead) }
            guard let lf else { return try needMore(end) }
            let blank = lf == 0 || (lf == 1 && input[0] == 0x0D)
            input.removeFirst(lf + 1)
            if blank { return done() }
        default:
            break
        }
        return nil
    }

    private func needMore(_ end: Bool) throws(Failure) -> Event {
        if end { throw .malformed("the upstream closed the connection inside a chunked answer") }
        return .needMore
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) throws(Failure) {
        if body.count + bytes.count > maxBody { throw .bodyTooLarge(limit: maxBody) }
        body += bytes
    }

    private mutating func done() -> Event {
        framing = .head
        return .complete(status: status, headers: headers, body: body)
    }

    /// Where the head's last field ends (before the blank line) and where the body begins.
    static func headEnd(_ bytes: [UInt8]) -> (head: Int, next: Int)? {
        var k = 0
        while let lf = bytes[k...].firstIndex(of: 0x0A) {
            let next = lf + 1
            if next < bytes.count, bytes[next] == 0x0A { return (next, next + 1) }
            if next + 1 < bytes.count, bytes[next] == 0x0D, bytes[next + 1] == 0x0A { return (next, next + 2) }
            k = next
        }
        return nil
    }

    private mutating func readHead(_ head: [UInt8]) throws(Failure) {
        guard let lf = head.firstIndex(of: 0x0A) else { throw .malformed("the answer has no status line") }
        var line = head[..<lf]
        if line.last == 0x0D { line = line.dropLast() }
        // HTTP/1.x SP 3DIGIT [SP reason]
        guard line.count >= 12, line.starts(with: "HTTP/1.".utf8), line[line.startIndex + 8] == 0x20 else {
            throw .malformed("the answer's status line is not HTTP/1.x")
        }
        var code = 0
        for byte in line[(line.startIndex + 9)..<(line.startIndex + 12)] {
            guard byte &- 0x30 < 10 else { throw .malformed("the answer's status code is not three digits") }
            code = code * 10 + Int(byte - 0x30)
        }
        guard code >= 100 else { throw .malformed("the answer's status code \(code) is out of range") }
        status = code
        for fieldLine in head[(lf + 1)...].split(separator: 0x0A) {
            guard let colon = fieldLine.firstIndex(of: UInt8(ascii: ":")), colon > fieldLine.startIndex else {
                if fieldLine.allSatisfy({ $0 == 0x0D }) { continue }
                throw .malformed("a field line has no name")
            }
            if fieldLine[..<colon].contains(where: { $0 == 0x20 || $0 == 0x09 }) { throw .malformed("a field name has whitespace") }
            var whole = Array(fieldLine)
            if whole.last != 0x0D { whole.append(0x0D) }
            whole.append(0x0A)
            whole.withUnsafeBufferPointer { headers.append(line: $0) }
        }
    }

    private func bodyFraming() throws(Failure) -> Framing {
        if status == 204 || status == 304 { return .length(0) }
        if let coding = headers.first("Transfer-Encoding") {
            guard coding.lowercased().split(separator: ",").last?.trimmingSpaces == "chunked" else {
                throw .malformed("the answer's transfer coding '\(coding)' is not chunked")
            }
            return .chunkSize
        }
        let lengths = headers.values("Content-Length")
        guard let first = lengths.first else { return .untilClose }
        guard lengths.allSatisfy({ $0 == first }), let length = Int(first), length >= 0 else {
            throw .malformed("the answer's Content-Length is not one number")
        }
        if length > maxBody { throw .bodyTooLarge(limit: maxBody) }
        return .length(length)
    }

    static func chunkSize(_ line: ArraySlice<UInt8>) throws(Failure) -> Int {
        var size = 0
        var digits = 0
        for byte in line {
            guard let value = Hex.value(byte) else {
                // An extension or the line's CR ends the size.
                guard digits > 0, byte == 0x3B || byte == 0x0D || byte == 0x20 || byte == 0x09 else {
                    throw .malformed("a chunk size is not hexadecimal")
                }
                return size
            }
            digits += 1
            guard digits <= 15 else { throw .malformed("a chunk size is too large") }
            size = size << 4 | Int(value)
        }
        guard digits > 0 else { throw .malformed("a chunk size is empty") }
        return size
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (a list element's OWS).
    public var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
