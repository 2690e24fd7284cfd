/// An incremental RFC 6455 frame reader for one direction of a relayed WebSocket: it
/// finds each frame's bounds, checks what the relay depends on (masking, opcodes,
/// control frames, fragmentation, sizes) and hands over whole frames, as received and
/// with the payload unmasked. A frame is held until complete: `maxMessage` bounds that,
/// and a message's fragments together.
public struct WebSocketFrameReader {
    /// Frames from a client must be masked, frames from a server must not (RFC 6455 §5.1).
    public let fromClient: Bool
    public let maxMessage: Int
    /// An extension was agreed: the RSV bits are its to use.
    public let extensions: Bool
    /// The start of a frame not yet whole.
    private var partial: [UInt8] = []
    /// Payload bytes of the data message whose fragments are arriving (nil: none open).
    private var messageBytes: Int?

    public init(fromClient: Bool, maxMessage: Int, extensions: Bool = false) {
        self.fromClient = fromClient
        self.maxMessage = maxMessage
        self.extensions = extensions
    }

    /// Bytes received and not yet part of a whole frame.
    public var heldBytes: Int { partial.count }

    /// Reads what `bytes` completes; `frame` sees each whole frame in order. Stops at the
    /// first violation: the connection cannot go on after one. Whole frames are copied
    /// once, from the read itself; only a frame split across reads is held.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ frame: (WebSocketFrame) -> Void) throws(WebSocketViolation) {
        var at = 0
        if !partial.isEmpty {
            // Complete the held frame first: take bytes until it is whole (or they run out).
            while at < bytes.count {
                let need = try Self.reading(partial) { held throws(WebSocketViolation) in try frameLength(held) }
                let take = min(need.map { $0 - partial.count } ?? 1, bytes.count - at)
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + take)]))
                at += take
                // Checked as each byte of the header comes: a frame refused by its header
                // is refused at once, not when more arrives.
                guard let whole = try Self.reading(partial, { held throws(WebSocketViolation) in try frameLength(held) }),
                      partial.count == whole else { continue }
                let complete = partial
                partial = []
                if let next = try Self.reading(complete, { raw throws(WebSocketViolation) in try nextFrame(raw, at: 0) }) { frame(next.frame) }
                break
            }
            if !partial.isEmpty { return }
        }
        while at < bytes.count {
            guard let next = try nextFrame(bytes, at: at) else {
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[at...]))
                // Checked now: a frame refused by its header is never held.
                _ = try Self.reading(partial) { held throws(WebSocketViolation) in try frameLength(held) }
                return
            }
            frame(next.frame)
            at = next.end
        }
    }

    /// `withUnsafeBytes` with the violation's type kept (the standard library's rethrows
    /// an untyped error).
    private static func reading<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(WebSocketViolation) -> R) throws(WebSocketViolation) -> R {
        let result: Result<R, WebSocketViolation> = bytes.withUnsafeBytes { raw in
            do throws(WebSocketViolation) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// A frame's whole length from its header, once the header has arrived (checked as
    /// `nextFrame` checks it); nil while it has not.
    private func frameLength(_ bytes: UnsafeRawBufferPointer) throws(WebSocketViolation) -> Int? {
        try header(bytes, at: 0).map { $0.payloadStart + $0.length }
    }

    private struct Header {
        var fin: Bool, opcode: UInt8, masked: Bool, length: Int, payloadStart: Int
    }

    /// The header of the frame at `at`, checked; nil while incomplete.
    private func header(_ bytes: UnsafeRawBufferPointer, at start: Int) throws(WebSocketViolation) -> Header? {
        let available = bytes.count - start
        guard available >= 2 else { return nil }
        let b0 = bytes[start], b1 = bytes[start + 1]
        let fin = b0 & 0x80 != 0
        let opcode = b0 & 0x0F
        let masked = b1 & 0x80 != 0
        if b0 & 0x70 != 0 && !extensions { throw .protocolError("a frame has reserved bits set and no extension was agreed") }
        if masked != fromClient {
            throw .protocolError(fromClient ? "a client frame is not masked" : "a server frame is masked")
        }
        switch opcode {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
        default: throw .protocolError("a frame has the reserved opcode \(opcode)")
        }
        let control = opcode & 0x08 != 0
        if control, !fin { throw .protocolError("a control frame is fragmented") }
        if !control {
            if opcode == 0, messageBytes == nil { throw .protocolError("a continuation frame has no message to continue") }
            if opcode != 0, messageBytes != nil { throw .protocolError("a new message began before the previous one ended") }
        }
        var length = Int(b1 & 0x7F)
        var size = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
            size = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            if bytes[start + 2] & 0x80 != 0 { throw .protocolError("a frame's 64-bit length has its most significant bit set") }
            var wide: UInt64 = 0
            for k in 2..<10 { wide = wide << 8 | UInt64(bytes[start + k]) }
            // Refused before any of it is held.
            guard wide <= UInt64(maxMessage) else { throw .tooBig(limit: maxMessage) }
            length = Int(wide)
            size = 10
        }
        if control, length > 125 { throw .protocolError("a control frame's payload is longer than 125 bytes") }
        if !control, (messageBytes ?? 0) + length > maxMessage { throw .tooBig(limit: maxMessage) }
        return Header(fin: fin, opcode: opcode, masked: masked, length: length, payloadStart: size + (masked ? 4 : 0))
    }

    /// The whole frame at `at` and where the next begins; nil while it is incomplete.
    private mutating func nextFrame(_ bytes: UnsafeRawBufferPointer, at start: Int) throws(WebSocketViolation) -> (frame: WebSocketFrame, end: Int)? {
        guard let h = try header(bytes, at: start), bytes.count - start >= h.payloadStart + h.length else { return nil }
        let end = start + h.payloadStart + h.length
        let frame = WebSocketFrame(fin: h.fin, opcode: h.opcode, raw: Array(UnsafeRawBufferPointer(rebasing: bytes[start..<end])),
                                   payloadStart: h.payloadStart, masked: h.masked)
        if h.opcode & 0x08 != 0 {
            if h.opcode == 0x8 { try Self.checkClose(frame.payload) }
        } else {
            messageBytes = h.fin ? nil : (messageBytes ?? 0) + h.length
        }
        return (frame, end)
    }

    static func unmask(_ payload: inout [UInt8], key: (UInt8, UInt8, UInt8, UInt8)) {
        let keys = [key.0, key.1, key.2, key.3]
        for k in payload.indices { payload[k] ^= keys[k & 3] }
    }

    /// A close frame's body: empty, or a valid code and UTF-8 reason (RFC 6455 §5.5.1, §7.4).
    static func checkClose(_ payload: [UInt8]) throws(WebSocketViolation) {
        if payload.isEmpty { return }
        if payload.count == 1 { throw .protocolError("a close frame's payload is one byte") }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        guard WebSocketClose.isValid(code) else { throw .protocolError("a close frame has the invalid code \(code)") }
        guard String(validating: payload[2...], as: UTF8.self) != nil else { throw .invalidData("a close frame's reason is not UTF-8") }
    }
}

/// One whole frame: `raw` as received (forwarded as is); its payload unmasked when asked.
public struct WebSocketFrame {
    public let fin: Bool
    public let opcode: UInt8
    public let raw: [UInt8]
    let payloadStart: Int
    let masked: Bool

    public var payloadCount: Int { raw.count - payloadStart }

    /// The payload, unmasked (a copy: relayed data frames never need it).
    public var payload: [UInt8] {
        var payload = Array(raw[payloadStart...])
        if masked {
            let k = payloadStart - 4
            WebSocketFrameReader.unmask(&payload, key: (raw[k], raw[k + 1], raw[k + 2], raw[k + 3]))
        }
        return payload
    }

    public var isControl: Bool { opcode & 0x08 != 0 }
    public var isClose: Bool { opcode == WebSocketOpcode.close }

    /// A close frame's code; 1005 (none given) for an empty one.
    public var closeCode: Int {
        let payload = self.payload
        return payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : WebSocketClose.noStatus
    }
}

public enum WebSocketOpcode {
    public static let continuation: UInt8 = 0x0
    public static let text: UInt8 = 0x1
    public static let binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8
    public static let ping: UInt8 = 0x9
    public static let pong: UInt8 = 0xA
}

/// What ends reading a direction, with the close code it calls for.
public enum WebSocketViolation: Error, Equatable {
    /// 1002
    case protocolError(String)
    /// 1009: a frame or message over `max_message`.
    case tooBig(limit: Int)
    /// 1007
    case invalidData(String)

    public var closeCode: Int {
        switch self {
        case .protocolError: WebSocketClose.protocolError
        case .tooBig: WebSocketClose.tooBig
        case .invalidData: WebSocketClose.invalidData
        }
    }

    public var reason: String {
        switch self {
        case .protocolError(let why), .invalidData(let why): why
        case .tooBig(let limit): "a message is larger than \(limit) bytes"
        }
    }
}

/// Close codes (RFC 6455 §7.4) and the frames serializerd writes itself.
public enum WebSocketClose {
    public static let normal = 1000
    public static let goingAway = 1001
    public static let protocolError = 1002
    public static let noStatus = 1005
    public static let invalidData = 1007
    public static let tooBig = 1009

    /// A code a close frame may carry: 1000–1003, 1007–1014 (registered), 3000–4999.
    public static func isValid(_ code: Int) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    /// A close frame with `code` and a reason cut to fit a control frame; masked with
    /// `mask` for the upstream (a client's frames are), plain for the client.
    public static func frame(code: Int, reason: String, mask: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        var cut = Array(reason.utf8.prefix(123))
        // Never half a character.
        while String(validating: cut, as: UTF8.self) == nil { cut.removeLast() }
        payload += cut
        return WebSocketFrameWriter.frame(opcode: WebSocketOpcode.close, payload: payload, mask: mask)
    }
}

public enum WebSocketFrameWriter {
    /// One final frame.
    public static func frame(opcode: UInt8, payload: [UInt8], mask: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        out.reserveCapacity(payload.count + 14)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 {
            out.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        guard let mask else { return out + payload }
        out += [mask.0, mask.1, mask.2, mask.3]
        var masked = payload
        WebSocketFrameReader.unmask(&masked, key: mask)
        return out + masked
    }
}
