import Foundation
@testable import Proxy
import Testing

/// The WebSocket stage alone: what it lets pass, what it refuses and how; a route with
/// `websocket.mode: off` has no WebSocket stage (Upgrade is then dropped as hop-by-hop).
@Suite struct WebSocketStageTests {
    static let routes = """
          - name: api
            match: { prefix: /api/ }
            upstream: {stub}
          - name: plain
            match: { prefix: /plain/ }
            upstream: {stub}
            websocket: { mode: off }

        """

    static let handshake = [("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"), ("Sec-WebSocket-Version", "13"),
                            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]

    static func refusal(_ step: StageStep) -> ProxyFailure? {
        if case .refused(let failure) = step { return failure }
        return nil
    }

    @Test func ordinaryRequestsAndOtherUpgradesPass() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (plain, _) = try harness.context("/api/x", route: "api")
        #expect(try harness.run(WebSocketStage(), plain).name == "passed")
        let (h2c, _) = try harness.context("/api/x", route: "api", headers: [("Upgrade", "h2c"), ("Connection", "Upgrade")])
        #expect(try harness.run(WebSocketStage(), h2c).name == "passed")
    }

    @Test func handshakesMissingWhatRFC6455RequiresAreRefused() throws {
        let harness = try StageHarness(routes: Self.routes)
        func step(_ headers: [(String, String)], method: String = "GET") throws -> StageStep {
            let (context, _) = try harness.context("/api/x", route: "api", method: method, headers: headers)
            return try harness.run(WebSocketStage(), context)
        }
        let without = { (name: String) in Self.handshake.filter { $0.0 != name } }
        #expect(Self.refusal(try step(without("Connection")))?.clientStatus == 400)
        #expect(Self.refusal(try step(without("Sec-WebSocket-Key")))?.clientStatus == 400)
        #expect(Self.refusal(try step(without("Sec-WebSocket-Key") + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ")]))?.clientStatus == 400)
        #expect(Self.refusal(try step(Self.handshake + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]))?.clientStatus == 400)
        #expect(Self.refusal(try step(Self.handshake, method: "POST"))?.clientStatus == 400)
        // A version other than 13 is answered here, with the version this relay speaks.
        let (old, exchange) = try harness.context("/api/x", route: "api", headers: without("Sec-WebSocket-Version") + [("Sec-WebSocket-Version", "8")])
        #expect(try harness.run(WebSocketStage(), old).name == "answered")
        #expect(exchange.replies.first?.status == 426)
        #expect(exchange.replies.first?.headers.contains { $0.0 == "Sec-WebSocket-Version" && $0.1 == "13" } == true)
        // A valid handshake on a connection that cannot become a tunnel (this in-process one).
        #expect(Self.refusal(try step(Self.handshake))?.detail == "this connection cannot be upgraded")
    }

    @Test func onlyRoutesThatRelayHaveTheStage() throws {
        let harness = try StageHarness(routes: Self.routes)
        #expect(try harness.stageNames("api").contains("WebSocketStage"))
        #expect(try !harness.stageNames("plain").contains("WebSocketStage"))
    }
}
