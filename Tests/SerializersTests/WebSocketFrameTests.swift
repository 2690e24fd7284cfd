import Serializers
import Testing

@Suite struct WebSocketFrameTests {
    static func frames(_ bytes: [UInt8], fromClient: Bool = false, max: Int = 1 << 20, split: Int? = nil) throws -> [WebSocketFrame] {
        var reader = WebSocketFrameReader(fromClient: fromClient, maxMessage: max)
        var out: [WebSocketFrame] = []
        let step = split ?? bytes.count
        var at = 0
        repeat {
            try Self.feed(&reader, Array(bytes[at..<min(bytes.count, at + step)])) { out.append($0) }
            at += step
        } while at < bytes.count
        return out
    }

    static func feed(_ reader: inout WebSocketFrameReader, _ bytes: [UInt8], _ each: (WebSocketFrame) -> Void) throws(WebSocketViolation) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        try reader.feed(UnsafeRawBufferPointer(rebasing: buffer[..<bytes.count]), each)
    }

    static func violation(_ bytes: [UInt8], fromClient: Bool = false, max: Int = 1 << 20) -> WebSocketViolation? {
        var reader = WebSocketFrameReader(fromClient: fromClient, maxMessage: max)
        do throws(WebSocketViolation) {
            try Self.feed(&reader, bytes) { _ in }
            return nil
        } catch {
            return error
        }
    }

    @Test func framesComeWholeWhateverTheReadsAndUnmasked() throws {
        let masked = WebSocketFrameWriter.frame(opcode: 1, payload: Array("hello".utf8), mask: (1, 2, 3, 4))
        let big = WebSocketFrameWriter.frame(opcode: 2, payload: [UInt8](repeating: 7, count: 70_000), mask: (9, 8, 7, 6))
        let all = masked + big
        for split in [1, 3, 13, all.count] {
            let frames = try Self.frames(all, fromClient: true, split: split)
            #expect(frames.count == 2)
            #expect(frames.first.map { String(decoding: $0.payload, as: UTF8.self) } == "hello")
            #expect(frames.first?.raw == masked)
            #expect(frames.last.map { $0.opcode == 2 && $0.payload.count == 70_000 && $0.payload.allSatisfy { $0 == 7 } } == true)
        }
        // 126: a 16-bit length.
        let medium = WebSocketFrameWriter.frame(opcode: 1, payload: [UInt8](repeating: 0x61, count: 300), mask: nil)
        let read = try Self.frames(medium)
        #expect(medium[1] == 126 && read.first?.payload.count == 300)
    }

    @Test func fragmentsInterleavedWithControlFrames() throws {
        let bytes: [UInt8] = [0x01, 0x01, 0x61, 0x89, 0x00, 0x00, 0x01, 0x62, 0x80, 0x01, 0x63]
        let frames = try Self.frames(bytes)
        #expect(frames.map(\.opcode) == [1, 9, 0, 0])
        #expect(frames.map(\.fin) == [false, true, false, true])
    }

    @Test func violationsNameTheirCloseCodes() {
        // Unmasked from a client, masked from a server.
        #expect(Self.violation([0x81, 0x01, 0x61], fromClient: true)?.closeCode == 1002)
        #expect(Self.violation([0x81, 0x81, 1, 2, 3, 4, 0x61])?.closeCode == 1002)
        // 2^63: the length's top bit; a length over the limit before any payload arrives.
        #expect(Self.violation([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0])?.closeCode == 1002)
        #expect(Self.violation([0x82, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .tooBig(limit: 1 << 20))
        // A message over the limit in fragments.
        #expect(Self.violation([0x01, 0x7E, 0x01, 0x00] + [UInt8](repeating: 0, count: 256) + [0x80, 0x7E, 0x01, 0x00], max: 300) == .tooBig(limit: 300))
        // Reserved bits, reserved opcodes, fragmented or long control frames.
        #expect(Self.violation([0xC1, 0x00])?.closeCode == 1002)
        #expect(Self.violation([0x83, 0x00])?.closeCode == 1002)
        #expect(Self.violation([0x09, 0x00])?.closeCode == 1002)
        #expect(Self.violation([0x89, 0x7E, 0x00, 0x7E])?.closeCode == 1002)
        // A continuation without a message, a new message inside one.
        #expect(Self.violation([0x80, 0x00])?.closeCode == 1002)
        #expect(Self.violation([0x01, 0x00, 0x81, 0x00])?.closeCode == 1002)
        // Close frames: one byte, an invalid code, a reason that is not UTF-8.
        #expect(Self.violation([0x88, 0x01, 0x03])?.closeCode == 1002)
        #expect(Self.violation([0x88, 0x02, 0x03, 0xE7])?.closeCode == 1002)
        #expect(Self.violation([0x88, 0x02, 0x03, 0xEE])?.closeCode == 1002)
        #expect(Self.violation([0x88, 0x03, 0x03, 0xE8, 0xFF])?.closeCode == 1007)
        #expect(Self.violation([0x88, 0x02, 0x0F, 0xA0]) == nil)
        #expect(Self.violation([0x88, 0x00]) == nil)
    }

    @Test func closeFramesWrittenFitAControlFrame() throws {
        let long = String(repeating: "é", count: 100)
        let frame = WebSocketClose.frame(code: 1001, reason: long, mask: nil)
        let read = try Self.frames(frame)
        #expect(read.first.map { $0.closeCode == 1001 && $0.payload.count <= 125 } == true)
        #expect(read.first.map { String(validating: $0.payload.dropFirst(2), as: UTF8.self) != nil } == true)
        let masked = try Self.frames(WebSocketClose.frame(code: 1009, reason: "big", mask: (1, 2, 3, 4)), fromClient: true)
        #expect(masked.first?.closeCode == 1009)
    }
}
