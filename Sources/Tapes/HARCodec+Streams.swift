import HTTPCore
import Serializers

/// What a tape entry keeps of an answer that arrived over time: a stream's chunks
/// (`_serializerd.chunks`) and a WebSocket's messages (`_webSocketMessages`).
extension HARCodec {
    /// Both, when the entry has them (members of the entry object).
    static func writeTiming(_ o: inout HARWriter, chunks: [StreamChunk]?, messages: [WebSocketMessage]?) {
        if let chunks {
            // A stream's timing: [milliseconds after the head, byte offset] for each piece.
            o.raw(",\"_serializerd\":{\"chunks\":[")
            for (k, chunk) in chunks.enumerated() {
                o.raw(k == 0 ? "[" : ",[")
                o.int(chunk.milliseconds)
                o.raw(",")
                o.int(chunk.offset)
                o.raw("]")
            }
            o.raw("]}")
        }
        if let messages {
            // Chrome's form: binary data in base64 (opcode 2 says so).
            o.raw(",\"_webSocketMessages\":[")
            for (k, m) in messages.enumerated() {
                o.raw(k == 0 ? "{\"type\":" : ",{\"type\":")
                o.raw(m.sent ? "\"send\"" : "\"receive\"")
                o.raw(",\"time\":")
                // Seconds since the epoch, to the millisecond, as a JSON number.
                Array(String((m.time * 1000).rounded() / 1000).utf8).withUnsafeBufferPointer { o.bytes($0) }
                o.raw(",\"opcode\":")
                o.int(m.opcode)
                o.raw(",\"data\":")
                if m.opcode == 1 {
                    m.data.withUnsafeBufferPointer { o.quoted($0) }
                } else {
                    o.raw("\"")
                    Base64.encode(m.data).withUnsafeBufferPointer { o.bytes($0) }
                    o.raw("\"")
                }
                o.raw("}")
            }
            o.raw("]")
        }
    }

    /// `_serializerd.chunks`: pairs of whole numbers, offsets rising within the body.
    static func chunks(_ e: [(String, JSONValue)], bodyCount: Int) throws(HARError) -> [StreamChunk]? {
        guard let custom = member("_serializerd", e), case .object(let c) = custom, let list = member("chunks", c) else { return nil }
        guard case .array(let items) = list else { throw HARError("_serializerd.chunks is not a list") }
        var chunks: [StreamChunk] = []
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, case .number(let msText) = pair[0], case .number(let offsetText) = pair[1],
                  let ms = Int(msText), let offset = Int(offsetText), ms >= 0, offset >= (chunks.last?.offset ?? 0), offset <= bodyCount else {
                throw HARError("_serializerd.chunks holds something other than [milliseconds, offset] pairs rising within the body")
            }
            chunks.append(StreamChunk(milliseconds: ms, offset: offset))
        }
        return chunks
    }

    /// `_webSocketMessages`: Chrome's `type` (send | receive), `time`, `opcode`, `data`.
    static func messages(_ e: [(String, JSONValue)]) throws(HARError) -> [WebSocketMessage]? {
        guard let list = member("_webSocketMessages", e) else { return nil }
        guard case .array(let items) = list else { throw HARError("_webSocketMessages is not a list") }
        var messages: [WebSocketMessage] = []
        for item in items {
            guard case .object(let m) = item, case .string(let type)? = member("type", m), type == "send" || type == "receive",
                  case .number(let opcodeText)? = member("opcode", m), let opcode = Int(opcodeText), opcode == 1 || opcode == 2,
                  case .string(let text)? = member("data", m) else {
                throw HARError("_webSocketMessages holds an entry without type (send or receive), opcode (1 or 2) and data")
            }
            var time = 0.0
            switch member("time", m) {
            case .number(let t)?: time = Double(t) ?? 0
            case .string(let t)?: time = Double(t) ?? 0
            default: break
            }
            guard time.isFinite, time >= 0 else { throw HARError("_webSocketMessages holds a time that is not a number of seconds") }
            let data: [UInt8]
            if opcode == 2 {
                guard let bytes = Base64.decode(Array(text.utf8)) else { throw HARError("_webSocketMessages holds binary data that is not base64") }
                data = bytes
            } else {
                data = Array(text.utf8)
            }
            messages.append(WebSocketMessage(sent: type == "send", time: time, opcode: opcode, data: data))
        }
        return messages
    }
}
