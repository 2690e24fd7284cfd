// libFuzzer target for the tape reader (Sources/Tapes/HARCodec.swift), built by
// fuzz/run.sh. Any input is a HAR file or an error; a file it reads must write back to
// one that reads as the same entries (what `record` then writes is what `replay` reads),
// and matching must be able to key every entry it read. A file it calls appendable must
// read back with one more entry once one is added the way recording adds it, and an
// entry encoded from buffers with redaction must equal the redacted entry encoded.
import HTTPCore

let capture = Redaction(headers: ["Authorization", "X-Key"], query: ["api_key"], json: ["/password", "/a/0"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let (entries, appendable) = try? HARCodec.decodeFile(bytes) else { return 0 }
    if appendable {
        let added = entries.last ?? TapeEntry(request: TapeRequest(method: "GET", url: "http://a/b?c=d", headers: [], body: []), status: 200,
                                              responseHeaders: [], responseBody: Array("{}".utf8), startedAt: 0, duration: 0)
        let grown = Array(bytes.dropLast(HARCodec.tail.count)) + (entries.isEmpty ? [] : [UInt8(ascii: ",")]) + HARCodec.encode(added) + HARCodec.tail
        guard let again = try? HARCodec.decode(grown) else { preconditionFailure("an appendable file does not read back once added to") }
        precondition(again.count == entries.count + 1 && again.last?.request == added.request, "the added entry is not the last one read back")
    }
    for entry in entries {
        let fromBuffers = HARCodec.encode(method: entry.request.method, url: entry.request.url, requestHeaders: HARCodec.each(entry.request.headers),
                                          requestBody: entry.request.body, status: entry.status, responseHeaders: HARCodec.each(entry.responseHeaders),
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
        precondition(a.request == b.request && a.status == b.status && a.responseBody == b.responseBody,
                     "an entry changed on the way back")
        _ = TapeMatch(body: .json).parts(a.request, redaction: Redaction()).key
    }
    return 0
}
