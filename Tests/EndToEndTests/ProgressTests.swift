import Foundation
import TestSupport
import Testing

/// Progress (DESIGN §6): a transfer running over a second sends `progress` events, and
/// `/-/inflight` lists what is waiting on its upstream.
@Suite(.timeLimit(.minutes(5)))
struct ProgressTests {
    @Test func aLongTransferReportsItsBytesUntilItLands() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), workers: 1)
        defer { proxy.finish() }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        let target = "/api/trickle?bytes=200000&seconds=2.5"
        let pending = proxy.inBackground(target)
        // Listed while in flight, bytes arriving, the total known from Content-Length.
        var listed: [String: Any]?
        let deadline = Date().addingTimeInterval(10)
        while listed == nil && Date() < deadline {
            let requests = proxy.json(try proxy.get("/-/inflight"))?["requests"] as? [[String: Any]] ?? []
            listed = requests.first { $0["path"] as? String == "/api/trickle" && ($0["bytes_down"] as? Int ?? 0) > 0 }
            if listed == nil { usleep(50_000) }
        }
        #expect(listed?["route"] as? String == "api" && listed?["total_down"] as? Int == 200_000, "\(listed ?? [:])")
        let text = stream.read(untilAll: ["event: progress\ndata: {\"request_id\""])
        let progress = text.components(separatedBy: "\n").filter { $0.hasPrefix("data: {\"request_id\"") && $0.contains("\"elapsed_ms\"") }
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.dropFirst(6).utf8)) as? [String: Any] }
        #expect(!progress.isEmpty && progress.allSatisfy { ($0["elapsed_ms"] as? Int ?? 0) >= 1000 }, "\(text)")
        #expect(pending.reply(timeout: 20)?.status == 200)
        // Landed: no longer listed (the board is at most a tick behind).
        let gone = Date().addingTimeInterval(5)
        var still = true
        while still && Date() < gone {
            still = !((proxy.json(try proxy.get("/-/inflight"))?["requests"] as? [[String: Any]] ?? []).isEmpty)
            if still { usleep(50_000) }
        }
        #expect(!still)
    }
}
