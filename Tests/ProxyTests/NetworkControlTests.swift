import EventLoop
import Foundation
@testable import Proxy
import Testing

/// `/-/network` in process: runtime conditions set, shown, expired and reset, and the
/// bodies it refuses.
@Suite struct NetworkControlTests {
    static let routes = [
        route("plain", prefix: "/p/"),
        route("slow", prefix: "/s/", extra: "    network: { latency: 100ms }\n"),
    ].joined()

    func put(_ proxy: InProcessProxy, _ body: String) -> RecordedExchange {
        proxy.get("/-/network", method: "PUT", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    @Test func aRuntimeChangeShapesTheRouteUntilItExpires() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        #expect(proxy.get("/p/json").shapings == [nil])
        let set = put(proxy, #"{"route": "plain", "network": {"profile": "slow-3g", "latency": "300ms"}, "expires": "2m"}"#)
        #expect(set.status == 200, "\(set.text)")
        let shown = try #require(set.replyJSON?["routes"] as? [[String: Any]])
        #expect(shown.count == 1 && shown[0]["route"] as? String == "plain")
        let runtime = try #require(shown[0]["runtime"] as? [String: Any])
        #expect(runtime["latency_ms"] as? Int == 300 && runtime["down"] as? Int == 50 << 10 && runtime["expires_in_seconds"] as? Int == 120)
        #expect(proxy.get("/p/json").shapings == [ReplyShaping(delay: 0.3, bytesPerSecond: 50 << 10)])
        // A runtime change takes the configured conditions' place.
        #expect(put(proxy, #"{"route": "slow", "network": {"fail_rate": 1, "faults": [{"status": 503}]}}"#).status == 200)
        #expect(proxy.get("/s/json").status == 503)
        let listed = try #require(proxy.get("/-/network").replyJSON?["routes"] as? [[String: Any]])
        #expect(listed.map { $0["route"] as? String } == ["plain", "slow"])
        #expect((listed[1]["configured"] as? [String: Any])?["latency_ms"] as? Int == 100)
        // The default expiry is ten minutes.
        #expect((listed[1]["runtime"] as? [String: Any])?["expires_in_seconds"] as? Int == 600)
        proxy.clock.advance(121)
        #expect(proxy.get("/p/json").shapings == [nil])
        #expect(proxy.get("/s/json").status == 503)
        let reset = proxy.get("/-/network/slow", method: "DELETE")
        #expect(reset.replyJSON?["reset"] as? Int == 1)
        #expect(proxy.get("/s/json").shapings == [ReplyShaping(delay: 0.1)])
        #expect(proxy.get("/-/network", method: "DELETE").replyJSON?["reset"] as? Int == 0)
    }

    @Test(arguments: [
        ("{\"route\": \"plain\"", "not JSON"),
        ("[1]", "expected a JSON object"),
        (#"{"route": "nope", "network": {}}"#, "no route named 'nope'"),
        (#"{"route": "plain"}"#, "missing required key 'network'"),
        (#"{"route": "plain", "network": {"warp": 9}}"#, "request body:1:32: error: network.warp: unknown key"),
        (#"{"route": "plain", "network": {"latency": "soon"}}"#, "network.latency: expected a positive duration"),
        (#"{"route": "plain", "network": {}, "expires": "2d"}"#, "expires"),
        (#"{"route": "plain", "network": {}, "expires": "25h"}"#, "expected at most 24h"),
        (String(repeating: "[", count: 5_000), "not JSON"),
        (#"{"route": "plain", "network": {}, "pad": ""# + String(repeating: "x", count: 70_000) + #""}"#, "over 65536 bytes"),
    ])
    func aBadChangeIsRefusedWithItsReason(body: String, reason: String) throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reply = put(proxy, body)
        #expect(reply.status == 400)
        #expect((reply.replyJSON?["detail"] as? String)?.contains(reason) == true, "\(reply.text)")
        #expect(proxy.get("/p/json").shapings == [nil])
    }

    @Test func adminRulesApply() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let stranger = RecordedExchange("PUT", "/-/network", headers: [("Host", "127.0.0.1")],
                                        body: Array(#"{"route": "plain", "network": {"latency": "1s"}}"#.utf8))
        stranger.peerAddress = "192.0.2.7"
        proxy.worker.pipeline.handle(stranger)
        #expect(stranger.status == 403)
        #expect(proxy.get("/-/network", method: "POST").status == 405)
        #expect(proxy.get("/-/network", method: "PUT", body: Array("{}".utf8), host: "evil.example").status == 403)
        #expect(proxy.get("/-/network/nope").status == 404)
        #expect(proxy.get("/p/json").shapings == [nil])
    }
}
