import HTTPCore
#if canImport(Telemetry)
import Telemetry
#endif

/// `capture`'s redaction of a recorded stream: each SSE `data:` line and each NDJSON
/// record is redacted as a body of its own (a stream as a whole is no JSON document),
/// and the chunks' offsets move with the bytes they pointed at. Byte streams are kept
/// as they are.
enum StreamRedaction {
    static func redact(_ body: [UInt8], chunks: [StreamChunk], capture: Redaction, contentType: String?) -> ([UInt8], [StreamChunk]) {
        let essence = contentType.flatMap(MediaType.init)?.essence ?? ""
        let sse = essence == "text/event-stream"
        guard sse || essence.hasSuffix("ndjson") || essence.hasSuffix("jsonl") || essence.hasSuffix("json-seq") || essence.hasSuffix("jsonlines")
        else { return (body, chunks) }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        // Each line's start, before and after.
        var starts: [(old: Int, new: Int)] = []
        var changed = false
        var at = 0
        while at < body.count {
            let end = (body[at...].firstIndex(of: 0x0A)).map { $0 + 1 } ?? body.count
            starts.append((at, out.count))
            let line = body[at..<end]
            var content = line
            while let last = content.last, last == 0x0A || last == 0x0D { content = content.dropLast() }
            let prefix = sse ? Self.dataPrefix(content) : (content.first == 0x1E ? 1 : 0)
            if prefix >= 0, let redacted = capture.body(Array(content.dropFirst(prefix)), contentType: "application/json") {
                out += content.prefix(prefix)
                out += redacted
                out += line[content.endIndex...]
                changed = true
            } else {
                out += line
            }
            at = end
        }
        guard changed else { return (body, chunks) }
        var moved: [StreamChunk] = []
        var line = 0
        for chunk in chunks {
            while line + 1 < starts.count, starts[line + 1].old <= chunk.offset { line += 1 }
            let start = starts.isEmpty ? (old: 0, new: 0) : starts[line]
            let lineEnd = line + 1 < starts.count ? starts[line + 1].new : out.count
            moved.append(StreamChunk(milliseconds: chunk.milliseconds, offset: min(start.new + (chunk.offset - start.old), lineEnd)))
        }
        return (out, moved)
    }

    /// The length of `data:` and the one space after it, or -1 for another line.
    static func dataPrefix(_ line: ArraySlice<UInt8>) -> Int {
        guard line.starts(with: "data:".utf8) else { return -1 }
        return line.dropFirst(5).first == 0x20 ? 6 : 5
    }
}
