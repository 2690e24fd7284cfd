import Foundation
import TestSupport
import Testing

/// Clients that misbehave get an answer or a clean close, and everyone else is still served.
@Suite(.timeLimit(.minutes(5)))
struct BadClientTests {
    @Test func malformedOversizedAndVanishingClientsLeaveTheDaemonServing() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"),
                                     top: "limits: { max_header_bytes: 4KiB, max_request_body: 1KiB }\n")
        let port = proxy.port

        // A request line that is not HTTP: answered with an error status or closed, never hung.
        let garbage = try RawHTTP.exchange(port: port, bytes: Array("GARBAGE\r\n\r\n".utf8), timeout: 5)
        #expect(garbage.isEmpty || String(decoding: garbage.prefix(12), as: UTF8.self).hasPrefix("HTTP/1.1 4"))

        // Over the configured limits: a problem document, and the connection ends.
        let bigHeader = try proxy.get("/api/json", headers: [("X-Big", String(repeating: "a", count: 5000))])
        #expect(bigHeader.status == 431 && bigHeader.header("Connection") == "close")
        #expect(proxy.json(bigHeader)?["type"] as? String == "urn:serializerd:headers-too-large")
        let bigBody = try proxy.get("/api/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 1500))
        #expect(bigBody.status == 413 && bigBody.header("Connection") == "close")
        #expect(proxy.json(bigBody)?["type"] as? String == "urn:serializerd:request-too-large")
        #expect(proxy.json(bigBody)?["title"] as? String == "The request body is larger than the limit of 1024 bytes.")
        // Just within them: served.
        let atLimit = try proxy.get("/api/json", headers: [("X-Big", String(repeating: "a", count: 3800))])
        #expect(atLimit.status == 200)
        // Far beyond them: the same problem documents, never a page of the server's own.
        let hugeHeader = try proxy.get("/api/json", headers: [("X-Big", String(repeating: "a", count: 90000))])
        #expect(hugeHeader.status == 431 && proxy.json(hugeHeader)?["type"] as? String == "urn:serializerd:headers-too-large")
        let hugeBody = try proxy.get("/api/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 50000))
        #expect(hugeBody.status == 413 && proxy.json(hugeBody)?["type"] as? String == "urn:serializerd:request-too-large")
        // The refusals serializerd answered are counted like any other reply.
        let metrics = try proxy.get("/metrics").text
        #expect(metrics.contains(#"code="431",outcome="headers_too_large""#))
        #expect(metrics.contains(#"code="413",outcome="request_too_large""#))

        // A client that sends half a request and vanishes.
        _ = try? RawHTTP.exchange(port: port, bytes: Array("GET /api/json HTTP/1.1\r\nHost: localhost\r\n".utf8), timeout: 0.2)

        // A client that goes away while its upstream request is still running.
        let vanishing = Thread { _ = try? RawHTTP.request(port: port, target: "/api/slow?seconds=0.5", timeout: 0.1) }
        vanishing.start()
        // Its reply had nowhere to go: counted as client_gone once the upstream answered.
        #expect(proxy.daemon.waitForLine(timeout: 10) { $0.contains("\"path\":\"/api/slow\"") && $0.contains("\"outcome\":\"client_gone\"") } != nil)

        #expect(try proxy.get("/api/json").status == 200)
        #expect(try proxy.get("/-/health").status == 200)
        #expect(proxy.finish() == 0)
    }
}
