// libFuzzer target for the tape reader (Sources/Tapes/HARCodec.swift), built by
// fuzz/run.sh. Any input is a HAR file or an error; a file it reads must write back to
// one that reads as the same entries (what `record` then writes is what `replay` reads),
// and matching must be able to key every entry it read. A file it calls appendable must
// read back with one more entry once one is added the way recording adds it, and an
// entry encoded from buffers with redaction must equal the redacted entry encoded. The
// reader walks the document entry by entry; it must read what the whole-tree reader
// (Reference.swift) reads.
@testable import Serializers
import HTTPCore

let capture = Redaction(headers: ["Authorization", "X-Key"], query: ["api_key"], json: ["/password", "/a/0"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let read = try? HARCodec.decodeFile(bytes)
    // The walking reader against the whole-tree one, on UTF-8 (the tree one also takes
    // UTF-16 and 32, which a HAR file is not) away from the nesting limit, which the two
    // count from different places.
    if UTF8Text.isValid(bytes), size < 2 || bytes[0] != 0 && bytes[1] != 0, bytes.filter({ $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }).count < 56 {
        let reference = referenceDecode(bytes)
        precondition((read == nil) == (reference == nil), "the walking reader and the tree reader disagree on whether the file reads")
        if let read, let reference {
            precondition(read.entries == reference.entries && read.skipped == reference.skipped, "the readers read different entries")
        }
    }
    guard let read else { return 0 }
    let (entries, appendable) = (read.entries, read.appendable)
    if appendable {
        let added = entries.last ?? TapeEntry(request: TapeRequest(method: "GET", url: "http://a/b?c=d", headers: HeaderFields(), body: []), status: 200,
                                              responseHeaders: HeaderFields(), responseBody: Array("{}".utf8), startedAt: 0, duration: 0)
        let grown = Array(bytes.dropLast(HARCodec.tail.count)) + (entries.isEmpty ? [] : [UInt8(ascii: ",")]) + HARCodec.encode(added) + HARCodec.tail
        guard let again = try? HARCodec.decode(grown) else { preconditionFailure("an appendable file does not read back once added to") }
        precondition(again.count == entries.count + 1 && again.last?.request == added.request, "the added entry is not the last one read back")
    }
    for entry in entries {
        // A stream is redacted line by line and encoded from its redacted entry (never from
        // buffers): its chunks must still point inside the body, in order.
        if entry.chunks != nil || entry.messages != nil {
            let redacted = entry.redacted(by: capture)
            let offsets = redacted.chunks?.map(\.offset) ?? []
            precondition(offsets == offsets.sorted() && (offsets.last ?? 0) <= redacted.responseBody.count, "redaction moved a chunk out of its body")
            guard let back = try? HARCodec.decodeEntry(HARCodec.encode(redacted)) else { preconditionFailure("a redacted stream does not read back") }
            precondition(back.chunks == redacted.chunks && back.responseBody == redacted.responseBody
                         && back.messages?.map(\.data) == redacted.messages?.map(\.data), "a redacted stream changed on the way back")
            continue
        }
        let fromBuffers = HARCodec.encode(method: entry.request.method, url: entry.request.url, requestHeaders: { entry.request.headers.forEach($0) },
                                          requestBody: entry.request.body, status: entry.status, responseHeaders: { entry.responseHeaders.forEach($0) },
                                          responseBody: entry.responseBody, startedAt: entry.startedAt, duration: entry.duration, capture: capture)
        precondition(fromBuffers == HARCodec.encode(entry.redacted(by: capture)), "encoding from buffers differs from encoding the redacted entry")
    }
    var file = HARCodec.head()
    for (k, entry) in entries.enumerated() {
        if k > 0 { file.append(UInt8(ascii: ",")) }
        file += HARCodec.encode(entry)
    }
    file += HARCodec.tail
    let again: [TapeEntry]
    do { again = try HARCodec.decode(file) } catch { preconditionFailure("a written tape does not read back: \(error)") }
    precondition(again.count == entries.count, "entries lost on the way back")
    for (a, b) in zip(entries, again) {
        precondition(a.request == b.request && a.status == b.status && a.responseBody == b.responseBody && a.chunks == b.chunks
                     && a.messages?.map(\.data) == b.messages?.map(\.data),
                     "an entry changed on the way back")
        _ = TapeMatch(body: .json).parts(a.request, redaction: Redaction()).key
    }
    return 0
}
