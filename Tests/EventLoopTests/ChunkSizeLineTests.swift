@testable import EventLoop
import Testing

@Suite struct ChunkSizeLineTests {
    @Test(arguments: [0, 1, 9, 10, 15, 16, 255, 256, 4096, 65535, 0x1234abc, Int(Int32.max)])
    func aChunkSizeIsLowercaseHexThenCRLF(size: Int) {
        #expect(Connection.chunkSizeLine(size) == Array((String(size, radix: 16) + "\r\n").utf8))
    }
}
