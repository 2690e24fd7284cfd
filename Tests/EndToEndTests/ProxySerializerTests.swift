import Foundation
import TestSupport
import Testing

/// Serializers through the real daemon against a real upstream: what only libcurl and the
/// sockets show. Every serializer, option and header rule is tested in process
/// (ProxyTests: RoutedSerializerTests).
@Suite(.timeLimit(.minutes(5)))
struct ProxySerializerTests {
    static let routes = route("json", prefix: "/j/") + route("image", prefix: "/i/", extra: "    response: { serializer: image }\n")

    /// What libcurl does on the way: a gzip body decoded, Accept-Encoding offered; and
    /// text and binary answers framed over a real socket.
    @Test func libcurlDecodesAndTheRepliesCrossTheSocket() throws {
        let proxy = try ProxyHarness(routes: Self.routes + route("http", prefix: "/h/", extra: "    request: { serializer: http }\n"))
        defer { proxy.finish() }
        #expect(try proxy.get("/j/gzip").text == #"{"zipped":true}"#)
        let forwarded = try #require(proxy.json(try proxy.get("/h/echo", headers: [("Accept-Encoding", "identity;q=0")]))?["headers"]
            as? [String: String])
        #expect(forwarded["accept-encoding"]?.contains("gzip") == true)
        let json = try proxy.get("/j/json")
        #expect(json.status == 200 && json.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(json.header("Content-Length") == String(json.body.count) && json.header("Date") != nil)
        let png = try proxy.get("/i/png?file=" + Fixture.path("images/sample.png"))
        #expect(png.text == #"{"format":"png","width":7,"height":5,"bytes":77}"#)
        let head = try proxy.get("/j/json", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
    }

    /// Easy handles are reused without a reset: nothing of one task's method or body may
    /// reach the next one on the same handle (one worker, so every task reuses the last).
    @Test func reusedUpstreamHandlesCarryNothingOver() throws {
        let proxy = try ProxyHarness(routes: route("http", prefix: "/h/", extra: "    request: { serializer: http }\n"), workers: 1)
        defer { proxy.finish() }
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        for _ in 0..<2 {
            for (method, body) in [("POST", "a=1"), ("GET", ""), ("HEAD", ""), ("GET", ""), ("PUT", "b=2"), ("DELETE", ""), ("GET", "")] {
                let response = try proxy.get("/h/echo", method: method, headers: body.isEmpty ? [] : form, body: Array(body.utf8))
                #expect(response.status == 200, "\(method)")
                if method == "HEAD" { #expect(response.body.isEmpty); continue }
                let echoed = try #require(proxy.json(response), "\(method)")
                #expect(echoed["method"] as? String == method)
                #expect(echoed["body"] as? String == body, "\(method)")
            }
        }
    }
}
