import Foundation
import TestSupport
import Testing

/// Clients that misbehave get an answer or a clean close, and everyone else is still served.
@Suite(.timeLimit(.minutes(2)))
struct BadClientTests {
    @Test func malformedOversizedAndVanishingClientsLeaveTheDaemonServing() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"),
                                     top: "limits: { max_header_bytes: 4KiB, max_request_body: 1KiB }\n")
        let port = proxy.port

        // A request line that is not HTTP: answered with an error status or closed, never hung.
        let garbage = try RawHTTP.exchange(port: port, bytes: Array("GARBAGE\r\n\r\n".utf8), timeout: 5)
        #expect(garbage.isEmpty || String(decoding: garbage.prefix(12), as: UTF8.self).hasPrefix("HTTP/1.1 4"))

        // Oversized headers and bodies are refused by the server's limits.
        let bigHeader = try proxy.get("/api/json", headers: [("X-Big", String(repeating: "a", count: 8000))])
        #expect((400...431).contains(bigHeader.status))
        let bigBody = try proxy.get("/api/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 5000))
        #expect(bigBody.status == 413)

        // A client that sends half a request and vanishes.
        _ = try? RawHTTP.exchange(port: port, bytes: Array("GET /api/json HTTP/1.1\r\nHost: x\r\n".utf8), timeout: 0.2)

        // A client that goes away while its upstream request is still running.
        let vanishing = Thread { _ = try? RawHTTP.request(port: port, target: "/api/slow?seconds=0.5", timeout: 0.1) }
        vanishing.start()
        usleep(800_000)

        #expect(try proxy.get("/api/json").status == 200)
        #expect(try proxy.get("/-/health").status == 200)
        #expect(proxy.finish() == 0)
    }
}
