import HTTPCore

/// A request line and its header fields, validated strictly (RFC 9112 §2–§6): the bytes
/// received, and the field lines as `HeaderFields` (one copy, read without a String per
/// field unless one is asked for).
public struct RequestHead: Sendable {
    public enum Version: Sendable { case http10, http11 }

    /// How the body is framed (RFC 9112 §6.3).
    public enum Framing: Sendable, Equatable {
        case none
        case length(Int)
        case chunked
    }

    /// The head as received, up to and including the empty line.
    public let bytes: [UInt8]
    public let method: String
    /// The request-target as sent: `/path?q` (origin-form) or `http://host/path` (absolute-form).
    public let target: String
    public let version: Version
    /// The header fields, in order, as received.
    public let fields: HeaderFields
    /// Where the first Host field's value lies in `fields.bytes`; start -1 without one.
    let hostStart: Int32, hostEnd: Int32
    public let framing: Framing
    /// The client allows the connection to stay open after this exchange.
    public let keepAlive: Bool
    /// `Expect: 100-continue`: the client waits for a 100 before sending its body.
    public let expectsContinue: Bool
    /// The request carries an `Upgrade` field (a WebSocket handshake asks so): read while
    /// parsing, so that a request without one is never searched for it.
    public var asksUpgrade: Bool = false

    /// The first Host field's value (validated: `uri-host[:port]`) as bytes; nil without one.
    /// Read on every request, so it is found while parsing and never searched for.
    public func withHost<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard hostStart >= 0 else { return nil }
        return fields.bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[Int(hostStart)..<Int(hostEnd)])) }
    }
}

extension RequestHead {
    /// Parses a complete head: `bytes` ends with the empty line (CRLF CRLF).
    public static func parse(_ bytes: [UInt8]) throws(HTTPParseError) -> RequestHead {
        var reader = HeadReader(count: bytes.count)
        return try bytes.withUnsafeBufferPointer { buffer throws(HTTPParseError) in
            try reader.read(buffer, owning: bytes)
        }
    }
}

/// One pass over a complete head: the request line, then each field line, then the
/// framing decided from the fields that carry it.
struct HeadReader {
    let count: Int
    var contentLength: Int?
    var transferCodings: [[UInt8]] = []
    var sawTransferEncoding = false
    var hostCount = 0
    var hostStart: Int32 = -1, hostEnd: Int32 = -1
    var connectionClose = false
    var connectionKeepAlive = false
    var expectsContinue = false
    var upgrade = false

    init(count: Int) { self.count = count }

    mutating func read(_ p: UnsafeBufferPointer<UInt8>, owning bytes: [UInt8]) throws(HTTPParseError) -> RequestHead {
        let table = ByteClass.table
        // Request line: method SP request-target SP HTTP-version CRLF.
        var i = scanToken(p, from: 0)
        guard i > 0 else { throw .malformed("the request line does not start with a method") }
        let methodEnd = i
        guard i < count, p[i] == 0x20 else { throw .malformed("the method is not followed by a single space") }
        i += 1
        let targetStart = i
        while i < count && table[Int(p[i])] & ByteClass.target != 0 { i += 1 }
        guard i > targetStart else { throw .malformed("the request-target is empty or starts with a space") }
        let targetEnd = i
        guard i < count, p[i] == 0x20 else {
            throw .malformed("the request-target contains a byte that is not visible ASCII (spaces and controls must be percent-encoded)")
        }
        i += 1
        guard i + 10 <= count, p[i] == 0x48, p[i + 1] == 0x54, p[i + 2] == 0x54, p[i + 3] == 0x50, p[i + 4] == 0x2F,
              p[i + 6] == 0x2E, p[i + 8] == 0x0D, p[i + 9] == 0x0A else {
            throw .malformed("the request line does not end with HTTP/1.1 and CRLF")
        }
        let version: RequestHead.Version
        switch (p[i + 5], p[i + 7]) {
        case (0x31, 0x31): version = .http11
        case (0x31, 0x30): version = .http10
        default: throw .malformed("unsupported HTTP version (serializerd speaks HTTP/1.0 and HTTP/1.1)")
        }
        i += 10
        let fieldsStart = i
        while i < count {
            if p[i] == 0x0D {
                // The empty line ends the head; anything after it is not ours to read.
                guard i + 2 == count, p[i + 1] == 0x0A else { throw .malformed("a header line ends with CR but not CRLF") }
                break
            }
            i = try readField(p, from: i)
        }
        let framing = try decideFraming(version: version)
        if version == .http11 && hostCount != 1 {
            throw .malformed(hostCount == 0 ? "an HTTP/1.1 request needs a Host header" : "more than one Host header")
        }
        var head = RequestHead(
            bytes: bytes, method: String(decoding: UnsafeBufferPointer(rebasing: p[0..<methodEnd]), as: UTF8.self),
            target: String(decoding: UnsafeBufferPointer(rebasing: p[targetStart..<targetEnd]), as: UTF8.self),
            version: version, fields: HeaderFields(lines: Array(UnsafeBufferPointer(rebasing: p[fieldsStart..<i]))),
            hostStart: hostStart < 0 ? -1 : hostStart - Int32(fieldsStart), hostEnd: hostEnd - Int32(fieldsStart), framing: framing,
            keepAlive: version == .http11 ? !connectionClose : (connectionKeepAlive && !connectionClose),
            expectsContinue: expectsContinue)
        head.asksUpgrade = upgrade
        return head
    }

    /// Where the run of token characters (tchar) from `start` ends.
    func scanToken(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while i < count && ByteClass.table[Int(p[i])] & ByteClass.token != 0 { i += 1 }
        return i
    }

    /// One `name: value CRLF` line starting at `start`; returns where the next begins.
    mutating func readField(_ p: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTPParseError) -> Int {
        let table = ByteClass.table
        if p[start] == 0x20 || p[start] == 0x09 { throw .malformed("obsolete line folding (a header line starts with whitespace)") }
        var i = scanToken(p, from: start)
        guard i > start else { throw .malformed("a header name is empty or contains a byte that is not a token character") }
        let nameEnd = i
        guard i < count, p[i] == 0x3A else {
            throw .malformed("a header name is followed by something other than a colon (no whitespace before the colon)")
        }
        i += 1
        while i < count && (p[i] == 0x20 || p[i] == 0x09) { i += 1 }
        let valueStart = i
        while i < count && table[Int(p[i])] & ByteClass.fieldValue != 0 { i += 1 }
        guard i + 1 < count, p[i] == 0x0D, p[i + 1] == 0x0A else {
            throw .malformed("a header value contains a control byte, or its line does not end with CRLF")
        }
        var valueEnd = i
        while valueEnd > valueStart && (p[valueEnd - 1] == 0x20 || p[valueEnd - 1] == 0x09) { valueEnd -= 1 }
        try interpret(name: UnsafeBufferPointer(rebasing: p[start..<nameEnd]), value: UnsafeBufferPointer(rebasing: p[valueStart..<valueEnd]))
        if hostCount == 1 && hostStart < 0 { (hostStart, hostEnd) = (Int32(valueStart), Int32(valueEnd)) }
        return i + 2
    }

    /// Remembers what the fields that shape the message say.
    mutating func interpret(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) {
        switch name.count {
        case 4 where ByteClass.equalsIgnoringCase(name, "host"):
            hostCount += 1
            guard HostField.isValid(value) else { throw .malformed("the Host header is not a valid uri-host[:port]") }
        case 7 where ByteClass.equalsIgnoringCase(name, "upgrade"):
            upgrade = true
        case 6 where ByteClass.equalsIgnoringCase(name, "expect"):
            if ByteClass.equalsIgnoringCase(value, "100-continue") { expectsContinue = true }
        case 10 where ByteClass.equalsIgnoringCase(name, "connection"):
            for option in Self.list(value) {
                if ByteClass.equalsIgnoringCase(option, "close") { connectionClose = true }
                if ByteClass.equalsIgnoringCase(option, "keep-alive") { connectionKeepAlive = true }
            }
        case 14 where ByteClass.equalsIgnoringCase(name, "content-length"):
            for element in Self.list(value) {
                let length = try Self.plainDigits(element)
                if let contentLength, contentLength != length { throw .malformed("two different Content-Length values") }
                contentLength = length
            }
            if contentLength == nil { throw .malformed("an empty Content-Length") }
        case 17 where ByteClass.equalsIgnoringCase(name, "transfer-encoding"):
            sawTransferEncoding = true
            for coding in Self.list(value) { transferCodings.append(Array(coding)) }
        default:
            break
        }
    }

    func decideFraming(version: RequestHead.Version) throws(HTTPParseError) -> RequestHead.Framing {
        if sawTransferEncoding {
            if contentLength != nil { throw .malformed("both Content-Length and Transfer-Encoding") }
            if version == .http10 { throw .malformed("Transfer-Encoding in an HTTP/1.0 request") }
            let chunked = transferCodings.last.map { $0.withUnsafeBufferPointer { ByteClass.equalsIgnoringCase($0, "chunked") } } ?? false
            guard chunked else { throw .malformed("a Transfer-Encoding whose last coding is not chunked") }
            guard transferCodings.count == 1 else {
                throw .malformed("a transfer coding other than chunked (serializerd decodes only chunked request bodies)")
            }
            return .chunked
        }
        if let contentLength, contentLength > 0 { return .length(contentLength) }
        return .none
    }

    /// A comma-separated list's non-empty elements, trimmed of whitespace.
    static func list(_ value: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
        var elements: [UnsafeBufferPointer<UInt8>] = []
        var start = 0
        for end in 0...value.count where end == value.count || value[end] == 0x2C {
            var a = start, b = end
            while a < b && (value[a] == 0x20 || value[a] == 0x09) { a += 1 }
            while b > a && (value[b - 1] == 0x20 || value[b - 1] == 0x09) { b -= 1 }
            if b > a { elements.append(UnsafeBufferPointer(rebasing: value[a..<b])) }
            start = end + 1
        }
        return elements
    }

    /// 1*DIGIT, nothing else (no sign, no spaces); a number too large for Int saturates,
    /// which the body limit then refuses.
    static func plainDigits(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> Int {
        guard !bytes.isEmpty else { throw .malformed("Content-Length is not plain digits") }
        var value = 0
        for c in bytes {
            guard c >= 0x30 && c <= 0x39 else { throw .malformed("Content-Length is not plain digits") }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(c - 0x30))
            value = o1 || o2 ? Int.max : sum
        }
        return value
    }
}
