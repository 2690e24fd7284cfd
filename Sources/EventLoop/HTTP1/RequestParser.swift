import HTTPCore

/// Reads HTTP/1.1 requests from a byte stream (RFC 9112), strictly: a pure value with no
/// sockets — bytes in, events or an error out. The caller keeps unconsumed bytes and
/// offers them again with whatever arrives next.
///
/// Strict because a lenient front end is how requests get smuggled: bare LF, obs-fold,
/// conflicting or non-numeric Content-Length, Transfer-Encoding with Content-Length, and
/// chunk sizes that are not plain hex are all errors, never guesses.
public struct RequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Request line and header fields (and, separately, a chunked body's trailers).
        public var maxHeadBytes: Int
        public var maxBodyBytes: Int

        public init(maxHeadBytes: Int, maxBodyBytes: Int) {
            self.maxHeadBytes = maxHeadBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    public enum Event: Sendable {
        /// A complete head. Its Content-Length may exceed the body limit: the caller
        /// decides (413 at once), having the head to answer with.
        case head(RequestHead)
        /// Body bytes at this range of the input just offered.
        case body(Range<Int>)
        /// The request is complete; the next bytes begin the next request.
        case end
    }

    enum State: Sendable {
        /// Looking for the empty line; `scanned` bytes hold no complete line end yet.
        case head(scanned: Int)
        case lengthBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers(scanned: Int)
        /// The request is complete: the next call reports `.end`.
        case complete
        /// The head announced a body over the limit: the next call throws.
        case refused(HTTPParseError)
    }

    /// May change between requests (a reload); the request being read keeps its own.
    public var limits: Limits
    var state = State.head(scanned: 0)
    /// Body bytes of the current chunked request so far.
    var chunkedTotal = 0

    public init(limits: Limits) { self.limits = limits }

    /// Right after a head: a body follows that will be read (not refused over the limit).
    public var willReadBody: Bool {
        switch state {
        case .lengthBody, .chunkSize: true
        default: false
        }
    }

    /// True between requests, before any byte of the next one.
    public var isIdle: Bool {
        if case .head(let scanned) = state { return scanned == 0 }
        return false
    }

    /// Reads the next event from `input`. `consumed` bytes are done with. A nil `event`
    /// with bytes consumed means "call again"; with none consumed, more bytes are needed
    /// (the caller offers the rest again, with what arrives next).
    public mutating func next(_ input: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (consumed: Int, event: Event?) {
        switch state {
        case .head(let scanned): return try head(input, scanned: scanned)
        case .lengthBody(let remaining):
            guard !input.isEmpty else { return (0, nil) }
            let take = min(remaining, input.count)
            state = remaining == take ? .complete : .lengthBody(remaining: remaining - take)
            return (take, .body(0..<take))
        case .complete:
            state = .head(scanned: 0)
            return (0, .end)
        case .refused(let error):
            throw error
        case .chunkSize: return try chunkSize(input)
        case .chunkData(let remaining):
            guard !input.isEmpty else { return (0, nil) }
            let take = min(remaining, input.count)
            state = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            return (take, .body(0..<take))
        case .chunkDataEnd:
            guard input.count >= 2 else {
                if input.count == 1 && input[0] != 0x0D { throw .malformed("chunk data is not followed by CRLF") }
                return (0, nil)
            }
            guard input[0] == 0x0D, input[1] == 0x0A else { throw .malformed("chunk data is not followed by CRLF") }
            state = .chunkSize
            return (2, nil)
        case .trailers(let scanned): return try trailers(input, scanned: scanned)
        }
    }

    private mutating func head(_ input: UnsafeBufferPointer<UInt8>, scanned: Int) throws(HTTPParseError) -> (consumed: Int, event: Event?) {
        // Empty lines before a request line are skipped (RFC 9112 §2.2).
        if scanned == 0, input.count >= 2, input[0] == 0x0D, input[1] == 0x0A { return (2, nil) }
        guard let end = try Self.findEmptyLine(input, from: scanned, limit: limits.maxHeadBytes) else {
            if input.count > limits.maxHeadBytes { throw .headTooLarge(limit: limits.maxHeadBytes) }
            // Resume after the last complete line end next time (never re-scan a line).
            state = .head(scanned: max(0, Self.lastLineStart(input, before: input.count)))
            return (0, nil)
        }
        let head = try RequestHead.parse(Array(input[0..<end]))
        switch head.framing {
        case .none: state = .complete
        case .length(let length) where length > limits.maxBodyBytes: state = .refused(.bodyTooLarge(limit: limits.maxBodyBytes))
        case .length(let length): state = .lengthBody(remaining: length)
        case .chunked:
            chunkedTotal = 0
            state = .chunkSize
        }
        return (end, .head(head))
    }

    /// The end of the head (just past CRLF CRLF), searching from `from`; nil if not yet.
    /// A LF without its CR is an error at once.
    static func findEmptyLine(_ p: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) throws(HTTPParseError) -> Int? {
        var i = from
        var lineStart = from
        // Nothing past the limit is looked at, so the verdict never depends on how the
        // bytes were split into reads.
        let scanEnd = min(p.count, limit)
        while i < scanEnd {
            if p[i] == 0x0A {
                guard i > 0, p[i - 1] == 0x0D else { throw .malformed("a line ends with LF alone (HTTP/1.1 needs CRLF)") }
                if i - lineStart == 1 && lineStart > 0 { return i + 1 }
                lineStart = i + 1
            }
            i += 1
        }
        return nil
    }

    /// Where the line containing `index - 1` starts: scanning resumes there.
    static func lastLineStart(_ p: UnsafeBufferPointer<UInt8>, before index: Int) -> Int {
        var i = index
        while i > 0 && p[i - 1] != 0x0A { i -= 1 }
        return i
    }

    /// `1*HEXDIG [ chunk-ext ] CRLF`. Chunk extensions are allowed (and ignored) after a
    /// `;`; nothing else may follow the digits.
    private mutating func chunkSize(_ input: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (consumed: Int, event: Event?) {
        let table = ByteClass.table
        var i = 0
        var size = 0
        while i < input.count && table[Int(input[i])] & ByteClass.hexDigit != 0 {
            guard i < 15 else { throw .malformed("a chunk size has more than 15 hex digits") }
            size = size << 4 | Int(Hex.value(input[i]).unsafelyUnwrapped)
            i += 1
        }
        guard i < input.count else { return (0, nil) }
        guard i > 0 else { throw .malformed("a chunk size is not plain hex digits") }
        if input[i] == 0x3B || input[i] == 0x20 || input[i] == 0x09 {
            // BWS ";" chunk-ext: whitespace only before the semicolon.
            while i < input.count && (input[i] == 0x20 || input[i] == 0x09) { i += 1 }
            guard i < input.count else { return (0, nil) }
            guard input[i] == 0x3B else { throw .malformed("a chunk size is followed by something other than a chunk extension") }
            while i < input.count && table[Int(input[i])] & ByteClass.fieldValue != 0 {
                i += 1
                guard i <= 4096 else { throw .malformed("a chunk extension is longer than 4096 bytes") }
            }
            guard i < input.count else { return (0, nil) }
        }
        guard input[i] == 0x0D else { throw .malformed("a chunk size line contains a byte that is not allowed there") }
        guard i + 1 < input.count else { return (0, nil) }
        guard input[i + 1] == 0x0A else { throw .malformed("a chunk size line ends with CR but not CRLF") }
        if size == 0 {
            state = .trailers(scanned: 0)
            return (i + 2, nil)
        }
        guard size <= limits.maxBodyBytes - chunkedTotal else { throw .bodyTooLarge(limit: limits.maxBodyBytes) }
        chunkedTotal += size
        state = .chunkData(remaining: size)
        return (i + 2, nil)
    }

    /// Trailer fields after the last chunk: validated like header fields, then dropped.
    private mutating func trailers(_ input: UnsafeBufferPointer<UInt8>, scanned: Int) throws(HTTPParseError) -> (consumed: Int, event: Event?) {
        if input.count >= 2 && input[0] == 0x0D && input[1] == 0x0A {
            state = .complete
            return (2, nil)
        }
        guard let end = try Self.findEmptyLine(input, from: scanned, limit: limits.maxHeadBytes) else {
            if input.count > limits.maxHeadBytes { throw .headTooLarge(limit: limits.maxHeadBytes) }
            state = .trailers(scanned: Self.lastLineStart(input, before: input.count))
            return (0, nil)
        }
        var reader = HeadReader(count: end)
        var i = 0
        while i < end - 2 { i = try reader.readField(input, from: i) }
        state = .complete
        return (end, nil)
    }
}
