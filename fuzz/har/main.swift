// libFuzzer target for the tape reader (Sources/Tapes/HARCodec.swift), built by
// fuzz/run.sh. Any input is a HAR file or an error; a file it reads must write back to
// one that reads as the same entries (what `record` then writes is what `replay` reads),
// and matching must be able to key every entry it read.
import HTTPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let entries = try? HARCodec.decode(bytes) else { return 0 }
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
