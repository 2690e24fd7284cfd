import Foundation
import TestSupport
import Testing

/// A stream's client that reads a byte a second (DESIGN §9): the upstream is paused, what
/// waits stays bounded, the worker goes on answering others, and the stream lives as long
/// as the client takes bytes (`client_idle` is for one that takes none); when it leaves,
/// the upstream transfer ends.
@Suite(.timeLimit(.minutes(5)))
struct SlowReaderTests {
    @Test func aClientReadingAByteASecondIsBoundedAndStallsNothing() throws {
        let routes = "  - name: live\n    match: { prefix: /live/ }\n    upstream: {stub}\n"
        let proxy = try ProxyHarness(routes: routes, top: "timeouts: { client_idle: 2s }\n", workers: 1, script: "stream_upstream.py")
        defer { proxy.finish() }
        func events() -> Int {
            guard let reply = try? RawHTTP.request(port: proxy.stubPort, target: "/sent"),
                  let object = try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Int] else { return -1 }
            return object["endless"] ?? -1
        }
        var slow: RawConnection? = try RawConnection(port: proxy.port, receiveBuffer: 4096)
        slow?.send("GET /live/endless?gap=0&pad=4000 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        var taken = 0, answered = 0, slowest = 0.0, mostBuffered = 0.0
        var written: [Int] = []
        // A byte a second for 6 s, longer than client_idle; in between, the same (only)
        // worker answers /metrics at once.
        for _ in 0..<6 {
            if slow?.readByte(timeout: 1) != nil { taken += 1 }
            let second = Date().addingTimeInterval(1)
            while Date() < second {
                let asked = Date()
                let metrics = Metrics(try proxy.get("/metrics").text)
                slowest = max(slowest, Date().timeIntervalSince(asked))
                mostBuffered = max(mostBuffered, metrics["serializerd_buffered_bytes"] ?? 0)
                answered += 1
            }
            written.append(events())
        }
        #expect(taken == 6 && answered > 20 && slowest < 0.5, "taken \(taken), answered \(answered), slowest \(slowest) s")
        // The upstream was paused: what it wrote stopped growing (its send blocks).
        #expect(written.count == 6 && written[5] > 0 && written[5] == written[4] && written[4] == written[3], "\(written)")
        // The relay's 256 KiB and one read of libcurl's at most, however long it went on.
        #expect(mostBuffered > 0 && mostBuffered <= Double(512 << 10), "\(mostBuffered)")
        #expect(!proxy.daemon.text.contains("\"outcome\""), "a client that still takes bytes was ended")
        // It leaves: the completion event, and the upstream's transfer is closed.
        slow = nil
        let event = proxy.daemon.waitForLine { $0.contains("\"outcome\":\"client_gone\"") } ?? ""
        #expect(event.contains("\"kind\":\"sse\""), "\(event)")
        #expect(proxy.stub.waitForLine(timeout: 5) { $0 == "closed endless" } != nil)
    }
}
