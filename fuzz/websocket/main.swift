// libFuzzer target for what a WebSocket relay parses (DESIGN §9): the RFC 6455 frame
// reader (Sources/Serializers/Stream/WebSocketFrames.swift) and the handshake answer's
// reader (Sources/HTTPCore/ResponseReader.swift), built by fuzz/run.sh. Oracles: the same
// input in two pieces and a byte at a time gives the same frames or the same violation;
// frames re-encoded by the writer read back the same; nothing held beyond its bound.
import HTTPCore
@testable import Serializers

struct Outcome: Equatable {
    var frames: [[UInt8]] = []
    var violation: WebSocketViolation?
}

func frames(_ input: [UInt8], fromClient: Bool, max: Int, pieces: [Int]) -> Outcome {
    var reader = WebSocketFrameReader(fromClient: fromClient, maxMessage: max)
    var out = Outcome()
    var start = 0
    for end in pieces + [input.count] where end >= start && end <= input.count {
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, end - start), alignment: 1)
        defer { piece.deallocate() }
        piece.copyBytes(from: input[start..<end])
        do throws(WebSocketViolation) {
            do {
                try reader.feed(UnsafeRawBufferPointer(rebasing: piece[..<(end - start)])) { frame in
                    precondition(frame.payload.count <= max, "a frame over the limit was handed over")
                    if !frame.isControl { precondition(frame.payload.count <= max) }
                    out.frames.append(frame.raw)
                    // The writer's frame of the same payload reads back as the same payload.
                    let again = WebSocketFrameWriter.frame(opcode: frame.opcode, payload: frame.payload, mask: fromClient ? (1, 2, 3, 4) : nil)
                    var check = WebSocketFrameReader(fromClient: fromClient, maxMessage: Swift.max(max, frame.payload.count), extensions: true)
                    var back: [UInt8]?
                    if frame.opcode == 0 { return }
                    again.withUnsafeBytes { raw in try? check.feed(raw) { back = $0.payload } }
                    precondition(frame.isClose || back == frame.payload, "a payload written again reads back differently")
                }
            }
        } catch {
            out.violation = error
            return out
        }
        precondition(reader.heldBytes <= max + 14, "the reader holds \(reader.heldBytes) bytes with a limit of \(max)")
        start = end
    }
    return out
}

func response(_ input: [UInt8], pieces: [Int]) -> String {
    var reader = ResponseReader(maxHead: 256, maxBody: 512)
    var start = 0
    for end in pieces + [input.count] where end >= start && end <= input.count {
        do throws(ResponseReader.Failure) {
            let event = try reader.feed(Array(input[start..<end]), end: end == input.count)
            switch event {
            case .needMore: break
            case .switched(let status, _, _): return "switched \(status)"
            case .complete(let status, _, let body):
                precondition(body.count <= 512, "a body over its bound")
                return "complete \(status) \(body)"
            }
        } catch {
            return "failed \(error)"
        }
        start = end
    }
    return "incomplete"
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let cut = size == 0 ? 0 : Int(input[0]) % (size + 1)
    let everyByte = size <= 512 ? Array(0...size) : [cut]
    for fromClient in [false, true] {
        for limit in [300, 1 << 20] {
            let whole = frames(input, fromClient: fromClient, max: limit, pieces: [])
            precondition(frames(input, fromClient: fromClient, max: limit, pieces: [cut]) == whole, "frames: a split at \(cut) differs")
            precondition(frames(input, fromClient: fromClient, max: limit, pieces: everyByte) == whole, "frames: byte-at-a-time differs")
        }
    }
    // The answer's reader: whole, split and byte at a time agree on what it is (a 101's
    // leftover depends on where the reads fall, so only its status is compared).
    let whole = response(input, pieces: [])
    precondition(response(input, pieces: [cut]) == whole, "response: a split at \(cut) differs: \(whole)")
    precondition(response(input, pieces: everyByte) == whole, "response: byte-at-a-time differs: \(whole)")
    return 0
}
