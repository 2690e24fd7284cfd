import EventLoop
import Foundation
@testable import Proxy
import Testing

/// Network conditions through a route, in process: the plan each request gets (shaping,
/// faults, chaos), header control, and what reaches the upstream and the metrics.
@Suite struct NetworkRouteTests {
    static let routes = [
        route("chaos", prefix: "/c/", extra: "    network: { chaos: [\"drop=/b\", \"string=/a/0\"] }\n"),
        route("slow", prefix: "/s/", extra: "    timeout: 2s\n    network: { latency: 800ms, down: 50KiB, header_control: true }\n"),
        route("fail", prefix: "/f/", extra: "    network: { fail_rate: 1, faults: [{status: 503}] }\n"),
        route("control", prefix: "/h/", extra: "    network: { header_control: true }\n"),
        route("closed", prefix: "/n/", extra: "    network: { latency: 10ms }\n"),
        route("xml", prefix: "/x/", extra: "    response: { serializer: xml }\n    network: { header_control: true }\n"),
        route("plain", prefix: "/p/"),
    ].joined()

    @Test func chaosDamagesTheAnswerBeforeTheSerializer() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reply = proxy.get("/c/json")
        #expect(reply.status == 200)
        #expect(reply.text == #"{"a":["1",2.50,null]}"#)
        #expect(reply.replyHeader("Serializerd-Fault-Applied") == "drop=/b, string=/a/0")
        #expect(reply.shapings == [nil])
        #expect(proxy.metric(#"serializerd_faults_total{route="chaos",fault="chaos"}"#) == 2)
        // Nothing to damage: nothing reported.
        let untouched = proxy.get("/c/json?body=%5B1%5D")
        #expect(untouched.text == "[1]")
        #expect(untouched.replyHeader("Serializerd-Fault-Applied") == nil)
    }

    @Test func latencyAndRateShapeTheReplyWithinTheRouteTimeout() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reply = proxy.get("/s/json")
        #expect(reply.status == 200)
        #expect(reply.shapings == [ReplyShaping(delay: 0.8, bytesPerSecond: 50 << 10)])
        #expect(reply.replyHeader("Serializerd-Fault-Applied") == "latency=800ms, down=51200")
        // Recorded once the shaped reply has left.
        #expect(proxy.metric(#"serializerd_faults_total{route="slow",fault="latency"}"#) == nil)
        reply.finish?(true)
        #expect(proxy.metric(#"serializerd_faults_total{route="slow",fault="latency"}"#) == 1)
        #expect(proxy.metric(#"serializerd_faults_total{route="slow",fault="down"}"#) == 1)
        let capped = proxy.get("/s/json", headers: [("Serializerd-Fault", "latency=10h")])
        #expect(capped.shapings.first??.delay == 2)
        // Every reply of the route, each on its own.
        #expect(proxy.get("/s/json").shapings.first??.delay == 0.8)
    }

    @Test func aStatusFaultReplacesTheExchange() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reply = proxy.get("/f/json")
        #expect(reply.status == 503)
        #expect(reply.replyJSON?["type"] as? String == "urn:serializerd:injected-fault")
        #expect(reply.replyHeader("Serializerd-Fault-Applied") == "status=503")
        #expect(proxy.upstream.received.isEmpty)
        #expect(proxy.metric(#"serializerd_faults_total{route="fail",fault="status"}"#) == 1)
        #expect(proxy.metric(#"serializerd_requests_total{route="fail",method="GET",code="503",outcome="injected_fault"}"#) == 1)
    }

    @Test func headerControlIsForAdminClientsOnRoutesThatAllowIt() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let asked = proxy.get("/h/json", headers: [("Serializerd-Fault", "status=418"), ("Serializerd-Chaos", "null=/b")])
        #expect(asked.status == 418)
        let chaos = proxy.get("/h/json", headers: [("Serializerd-Chaos", "null=/b; content_type=application/json")])
        #expect(chaos.text == #"{"a":[1,2.50,null],"b":null}"#)
        #expect(chaos.replyHeader("Serializerd-Fault-Applied") == "null=/b, content_type=application/json")
        // Not from another network, and not on a route without header_control.
        let stranger = RecordedExchange("GET", "/h/json", headers: [("Host", "127.0.0.1"), ("Serializerd-Fault", "status=503")])
        stranger.peerAddress = "192.0.2.7"
        proxy.worker.pipeline.handle(stranger)
        proxy.settle()
        #expect(stranger.status == 200)
        #expect(stranger.replyHeader("Serializerd-Fault-Applied") == nil)
        #expect(proxy.get("/n/json", headers: [("Serializerd-Fault", "status=503")]).status == 200)
        #expect(proxy.metric(#"serializerd_faults_total{route="control",fault="ignored_header"}"#) == 1)
        #expect(proxy.metric(#"serializerd_faults_total{route="closed",fault="ignored_header"}"#) == 1)
        // Neither header goes upstream.
        let forwarded = proxy.upstream.received.flatMap { $0.headers.pairs.map { $0.0.lowercased() } }
        #expect(!forwarded.contains("serializerd-fault") && !forwarded.contains("serializerd-chaos"))
        #expect(proxy.get("/p/json", headers: [("Serializerd-Fault", "status=503")]).status == 200)
    }

    @Test func anUnreadableFaultHeaderIsABadRequest() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reply = proxy.get("/h/json", headers: [("Serializerd-Fault", "explode")])
        #expect(reply.status == 400)
        #expect((reply.replyJSON?["detail"] as? String)?.contains("Serializerd-Fault: unknown fault directive 'explode'") == true)
        let deep = proxy.get("/h/json", headers: [("Serializerd-Chaos", "drop=" + String(repeating: "/a", count: 10_000))])
        #expect(deep.status == 400)
        #expect(proxy.upstream.received.isEmpty)
    }

    @Test func resetTruncateAndTimeoutAreShapedReplies() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let reset = proxy.get("/h/json", headers: [("Serializerd-Fault", "reset")])
        #expect(reset.shapings == [ReplyShaping(ending: .reset)])
        #expect(proxy.upstream.received.isEmpty)
        reset.finish?(false)
        #expect(proxy.metric(#"serializerd_requests_total{route="control",method="GET",code="0",outcome="injected_fault"}"#) == 1)
        let truncated = proxy.get("/h/json", headers: [("Serializerd-Fault", "truncate; latency=5ms")])
        #expect(truncated.shapings == [ReplyShaping(delay: 0.005, ending: .truncate)])
        #expect(proxy.upstream.received.count == 1)
        truncated.finish?(true)
        #expect(proxy.metric(#"serializerd_requests_total{route="control",method="GET",code="200",outcome="injected_fault"}"#) == 1)
        let timeout = proxy.get("/h/json", headers: [("Serializerd-Fault", "timeout")])
        #expect(timeout.status == 504)
        #expect(timeout.shapings == [ReplyShaping(delay: 30)])
    }

    @Test func chaosReachesAnXMLRoutesSerializer() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let html = proxy.get("/x/xml", headers: [("Serializerd-Chaos", "html_200")])
        #expect(html.status == 502)
        #expect((html.replyJSON?["type"] as? String)?.hasSuffix("unacceptable-content-type") == true)
        let typed = proxy.get("/x/xml", headers: [("Serializerd-Chaos", "content_type=text/plain")])
        #expect((typed.replyJSON?["type"] as? String)?.hasSuffix("unacceptable-content-type") == true)
    }

    @Test func aSeedReplaysTheFaultSequence() throws {
        let seeded = route("dice", prefix: "/d/", extra: "    network: { fail_rate: 0.5, faults: [{status: 503}, {status: 429}], seed: 42 }\n")
        func run() throws -> [Int] {
            let proxy = try InProcessProxy(routes: seeded)
            return (0..<24).map { _ in proxy.get("/d/json").status ?? 0 }
        }
        let first = try run()
        #expect(first == (try run()))
        #expect(Set(first) == [200, 503, 429])
    }
}
