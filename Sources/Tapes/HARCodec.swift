import HTTPCore
// fuzz/har compiles these files into one module with the ones they use.
#if canImport(Serializers)
import Serializers
#endif
#if canImport(Telemetry)
import Telemetry
#endif

/// A tape on disk is HAR 1.2 (the format of Chrome's network panel, Proxyman, Charles and
/// mitmproxy): `{"log":{"version":"1.2","creator":…,"entries":[…]}}`, bodies inline in
/// `text`, base64 (`"encoding":"base64"`) when they are not UTF-8. Request bodies use
/// `postData`, whose base64 form HAR has no field for: `_encoding` says it.
public enum HARCodec {
    /// The file around the entries: `head + entry, entry, … + tail`.
    public static func head(version: String = ServerVersion.string) -> [UInt8] {
        Array(#"{"log":{"version":"1.2","creator":{"name":"serializerd","version":"#.utf8)
            + NormalizedJSON(.string(version)).bytes + Array(#"},"pages":[],"entries":["#.utf8)
    }

    public static let tail: [UInt8] = Array("]}}\n".utf8)

    /// A header block's fields, each as its raw name and value, in order.
    public typealias Fields = ((UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) -> Void

    /// One entry's JSON, written straight into one buffer.
    public static func encode(_ entry: TapeEntry) -> [UInt8] {
        encode(method: entry.request.method, url: entry.request.url, requestHeaders: { entry.request.headers.forEach($0) },
               requestBody: entry.request.body, status: entry.status, responseHeaders: { entry.responseHeaders.forEach($0) },
               responseBody: entry.responseBody,
               startedAt: entry.startedAt, duration: entry.duration, capture: nil, chunks: entry.chunks, messages: entry.messages)
    }

    /// The fields of a list.
    public static func each(_ list: [(String, String)]) -> Fields {
        { visit in
            for k in list.indices {
                var name = list[k].0, value = list[k].1
                name.withUTF8 { name in value.withUTF8 { visit(name, $0) } }
            }
        }
    }

    /// One exchange's entry from the buffers a worker holds (no string per field), with
    /// `capture`'s redaction applied on the way (the same bytes as encoding the redacted
    /// `TapeEntry`): recording encodes each exchange once, as it completes.
    public static func encode(method: String, url: String, requestHeaders: Fields, requestBody: [UInt8], status: Int,
                              responseHeaders: Fields, responseBody: [UInt8], startedAt: Double, duration: Double,
                              capture: Redaction?, httpVersion: String? = nil, chunks: [StreamChunk]? = nil,
                              messages: [WebSocketMessage]? = nil) -> [UInt8] {
        // HAR names versions as they appear on the wire: HTTP/1.1, HTTP/2 (h2), HTTP/3.
        let version = "HTTP/" + (httpVersion ?? "1.1")
        let url = capture?.url(url) ?? url
        var o = HARWriter(capacity: 6 * (responseBody.count + requestBody.count) + url.utf8.count + 2048)
        o.raw("{\"startedDateTime\":")
        o.timestamp(startedAt)
        o.raw(",\"time\":")
        o.milliseconds(duration)
        o.raw(",\"request\":{\"method\":")
        o.string(method)
        o.raw(",\"url\":")
        o.string(url)
        o.raw(",\"httpVersion\":")
        o.string(version)
        o.raw(",\"cookies\":[],\"headers\":")
        let requestType = o.fields(requestHeaders, capture: capture)
        o.raw(",\"queryString\":")
        o.fields(each(Redaction.queryPairs(url)), capture: nil)
        o.raw(",\"headersSize\":-1,\"bodySize\":")
        let sentBody = capture?.body(requestBody, contentType: requestType) ?? requestBody
        o.int(sentBody.count)
        if !sentBody.isEmpty {
            o.raw(",\"postData\":{\"mimeType\":")
            o.string(requestType ?? "")
            o.raw(",")
            o.text(sentBody, encodingKey: "_encoding")
            o.raw("}")
        }
        o.raw("},\"response\":{\"status\":")
        o.int(status)
        o.raw(",\"statusText\":")
        o.string(HTTPReason.phrase(status))
        o.raw(",\"httpVersion\":")
        o.string(version)
        o.raw(",\"cookies\":[],\"headers\":")
        let responseType = o.fields(responseHeaders, capture: capture)
        let body = capture?.body(responseBody, contentType: responseType) ?? responseBody
        o.raw(",\"content\":{\"size\":")
        o.int(body.count)
        o.raw(",\"mimeType\":")
        o.string(responseType ?? "")
        o.raw(",")
        o.text(body, encodingKey: "encoding")
        o.raw("},\"redirectURL\":\"\",\"headersSize\":-1,\"bodySize\":")
        o.int(body.count)
        o.raw("},\"cache\":{},\"timings\":{\"send\":0,\"wait\":")
        o.milliseconds(duration)
        o.raw(",\"receive\":0}")
        writeTiming(&o, chunks: chunks, messages: messages)
        o.raw("}")
        return o.finish()
    }

    /// The entries of a HAR file, or an error naming the entry and the field.
    public static func decode(_ bytes: [UInt8]) throws(HARError) -> [TapeEntry] {
        try decodeFile(bytes).entries
    }

    /// What reading a HAR file gives: its entries, the entries skipped (saved by a browser
    /// without an answer: status 0, a cancelled or blocked request), and whether new
    /// entries can be added by rewriting the file's last `tail.count` bytes: the file ends
    /// with `tail` and `entries` is the last member of `log`, the only member of the
    /// document (so that `]` closes the entries array).
    public struct File: Sendable {
        public var entries: [TapeEntry] = []
        public var skipped = 0
        public var appendable = false
    }

    /// Reads the document one entry at a time (`JSONWalker`): what is held beside the
    /// file's bytes is the entries made so far and one entry's parse, never a tree of
    /// the whole file (DESIGN §2: a tape is read within twice its size plus 64 MiB).
    public static func decodeFile(_ bytes: [UInt8]) throws(HARError) -> File {
        guard UTF8Text.isValid(bytes) else {
            throw HARError("not JSON: a HAR file is UTF-8 text (RFC 8259), and this one is not valid UTF-8")
        }
        return try bytes.withUnsafeBufferPointer { (all) throws(HARError) -> File in
            var walker = JSONWalker(all, maxDepth: 64)
            // A UTF-8 byte order mark is tolerated, as the JSON reader tolerates it.
            if all.count >= 3, all[0] == 0xEF, all[1] == 0xBB, all[2] == 0xBF { walker = JSONWalker(UnsafeBufferPointer(rebasing: all[3...]), maxDepth: 64) }
            let file = try readDocument(&walker)
            guard walker.peek() == nil else { throw walker.fail("text after the document") }
            return file
        }
    }

    /// `{"log": {…, "entries": [ … ]}, …}`: the first `log` object's first `entries` array
    /// is read entry by entry; everything else is checked and passed over.
    static func readDocument(_ walker: inout JSONWalker) throws(HARError) -> File {
        guard walker.peek() == UInt8(ascii: "{") else {
            _ = try walker.skipValue()
            throw HARError("not HAR: no top-level \"log\" object")
        }
        var file = File()
        var topMembers = 0
        // The first member of each name counts, as a reader of the tree would take it.
        var log: Bool?, entries: Bool?
        var logMembers: [Bool] = []   // per member of the log read: whether it was `entries`
        if try walker.open(UInt8(ascii: "{")) {
            repeat {
                topMembers += 1
                let name = try walker.memberName()
                guard log == nil, walker.name(name, is: "log") else {
                    try walker.skipValue(depth: 1)
                    continue
                }
                log = walker.peek() == UInt8(ascii: "{")
                guard log == true else {
                    try walker.skipValue(depth: 1)
                    continue
                }
                if try walker.open(UInt8(ascii: "{")) {
                    repeat {
                        let member = try walker.memberName()
                        let isEntries = walker.name(member, is: "entries")
                        logMembers.append(isEntries)
                        guard isEntries, entries == nil else {
                            try walker.skipValue(depth: 2)
                            continue
                        }
                        entries = walker.peek() == UInt8(ascii: "[")
                        if entries == true { try readEntries(&walker, into: &file) } else { try walker.skipValue(depth: 2) }
                    } while try walker.next(closing: UInt8(ascii: "}"))
                }
            } while try walker.next(closing: UInt8(ascii: "}"))
        }
        guard log == true else { throw HARError("not HAR: no top-level \"log\" object") }
        guard entries == true else { throw HARError("not HAR: log has no \"entries\" array") }
        file.appendable = topMembers == 1 && logMembers.last == true && logMembers.filter { $0 }.count == 1
            && walker.bytes.count >= tail.count && walker.bytes.suffix(tail.count).elementsEqual(tail)
        return file
    }

    /// Each element of `entries`: its bytes parsed on their own, made an entry, let go.
    static func readEntries(_ walker: inout JSONWalker, into file: inout File) throws(HARError) {
        guard try walker.open(UInt8(ascii: "[")) else { return }
        var index = 0
        repeat {
            let span = try walker.skipValue(depth: 3)
            let value: JSONValue
            do { value = try JSONValue.parse(Array(walker.bytes[span]), options: JSONReadOptions(allowFragments: true, maxDepth: 61)) } catch {
                throw HARError("entry \(index): not JSON: \(error.description)")
            }
            do throws(HARError) {
                if let entry = try entry(value) { file.entries.append(entry) } else { file.skipped += 1 }
            } catch {
                throw HARError("entry \(index): \(error.message)")
            }
            index += 1
        } while try walker.next(closing: UInt8(ascii: "]"))
    }
    /// One entry's JSON (as `encode` writes it).
    public static func decodeEntry(_ bytes: [UInt8]) throws(HARError) -> TapeEntry {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: false, maxDepth: 64)) } catch {
            throw HARError("not JSON: \(error.description)")
        }
        guard let entry = try entry(value) else { throw HARError("response.status is 0: the exchange has no answer") }
        return entry
    }

    /// One entry; nil for one saved without an answer (status 0: cancelled or blocked).
    static func entry(_ value: JSONValue) throws(HARError) -> TapeEntry? {
        guard case .object(let e) = value else { throw HARError("not an object") }
        // serializerd's own HAR (`/-/recent?format=har`) describes the client's exchange and
        // carries the upstream's as `_serializerd.upstream`: that is the tape entry.
        if let custom = member("_serializerd", e), case .object(let c) = custom, let upstream = member("upstream", c) {
            do throws(HARError) { return try entry(upstream) } catch { throw HARError("_serializerd.upstream: \(error.message)") }
        }
        let request = try object("request", e, "request")
        let response = try object("response", e, "response")
        let method = try string("method", request, "request.method")
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else { throw HARError("request.method '\(method)' is not an HTTP method") }
        let url = try string("url", request, "request.url")
        guard url.hasPrefix("http://") || url.hasPrefix("https://") || url.hasPrefix("/"),
              !url.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) else {
            throw HARError("request.url '\(url)' is not an http(s) URL")
        }
        let requestHeaders = try headerList(member("headers", request), "request.headers")
        var requestBody: [UInt8] = []
        if let post = member("postData", request) {
            guard case .object(let p) = post else { throw HARError("request.postData is not an object") }
            requestBody = try body(p, encodingKeys: ["_encoding", "encoding"], "request.postData")
        }
        guard let statusValue = member("status", response), case .number(let statusText) = statusValue,
              let status = Int(statusText), status == 0 || (100...999).contains(status) else {
            throw HARError("response.status is not a number from 100 to 999")
        }
        if status == 0 { return nil }
        let responseHeaders = try headerList(member("headers", response), "response.headers")
        var responseBody: [UInt8] = []
        if let content = member("content", response) {
            guard case .object(let c) = content else { throw HARError("response.content is not an object") }
            responseBody = try body(c, encodingKeys: ["encoding"], "response.content")
        }
        var headers = HeaderFields(responseHeaders)
        // A HAR from a browser may name the type only in content.mimeType.
        if headers.first("Content-Type") == nil, let content = member("content", response),
           case .object(let c) = content, let mime = member("mimeType", c), case .string(let type) = mime, !type.isEmpty {
            // It becomes a header line: refused like one that holds a line break.
            guard !type.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw HARError("response.content.mimeType holds CR, LF or NUL")
            }
            headers.append("Content-Type", type)
        }
        var started = 0.0
        if let date = member("startedDateTime", e), case .string(let text) = date { started = ISODate.seconds(text) ?? 0 }
        var duration = 0.0
        if let time = member("time", e), case .number(let text) = time, let ms = Double(text), ms >= 0, ms.isFinite { duration = ms / 1000 }
        return TapeEntry(request: TapeRequest(method: method, url: url, headers: HeaderFields(requestHeaders), body: requestBody),
                         status: status, responseHeaders: headers, responseBody: responseBody, startedAt: started, duration: duration,
                         chunks: try chunks(e, bodyCount: responseBody.count), messages: try messages(e))
    }

    static func member(_ name: String, _ members: [(String, JSONValue)]) -> JSONValue? {
        members.first { $0.0 == name }?.1
    }

    static func object(_ name: String, _ members: [(String, JSONValue)], _ path: String) throws(HARError) -> [(String, JSONValue)] {
        guard let value = member(name, members), case .object(let inner) = value else { throw HARError("\(path) is missing or not an object") }
        return inner
    }

    static func string(_ name: String, _ members: [(String, JSONValue)], _ path: String) throws(HARError) -> String {
        guard let value = member(name, members), case .string(let text) = value else { throw HARError("\(path) is missing or not a string") }
        return text
    }

    static func headerList(_ value: JSONValue?, _ path: String) throws(HARError) -> [(String, String)] {
        guard let value else { return [] }
        guard case .array(let items) = value else { throw HARError("\(path) is not an array") }
        var out: [(String, String)] = []
        for (k, item) in items.enumerated() {
            guard case .object(let h) = item else { throw HARError("\(path)[\(k)] is not an object") }
            let name = try string("name", h, "\(path)[\(k)].name")
            let value = try string("value", h, "\(path)[\(k)].value")
            // HTTP/2 pseudo-headers (:authority, :path), which browsers list, are not fields.
            if name.hasPrefix(":") { continue }
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else { throw HARError("\(path)[\(k)].name '\(name)' is not a header name") }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw HARError("\(path)[\(k)] (\(name)) holds CR, LF or NUL")
            }
            out.append((name, value))
        }
        return out
    }

    static func body(_ members: [(String, JSONValue)], encodingKeys: [String], _ path: String) throws(HARError) -> [UInt8] {
        guard let textValue = member("text", members) else { return [] }
        guard case .string(let text) = textValue else { throw HARError("\(path).text is not a string") }
        let encoding = encodingKeys.lazy.compactMap { key -> String? in
            if case .string(let e)? = member(key, members) { return e } else { return nil }
        }.first
        switch encoding {
        case nil, "": return Array(text.utf8)
        case "base64":
            guard let bytes = Base64.decode(text.utf8.filter { $0 != 0x0A && $0 != 0x0D }) else { throw HARError("\(path).text is not valid base64") }
            return bytes
        case let other?: throw HARError("\(path).encoding '\(other)' is not supported (base64 is)")
        }
    }

    /// RFC 9110 tchar.
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }
}
