import Foundation
import TestSupport
import Testing

/// Every serializer through a route of the real daemon, against a real upstream.
@Suite(.timeLimit(.minutes(2)))
struct ProxySerializerTests {
    static let routes = [
        route("json", prefix: "/j/"),
        route("xml", prefix: "/x/", extra: "    response: { serializer: xml, xml: { force_array: [/rss/channel/item] } }\n"),
        route("plist", prefix: "/p/", extra: "    response: { serializer: plist }\n"),
        route("image", prefix: "/i/", extra: "    response: { serializer: image }\n"),
        route("form", prefix: "/f/", extra: "    response: { serializer: form }\n"),
        route("text", prefix: "/t/", extra: "    response: { serializer: text }\n"),
        route("raw", prefix: "/r/", extra: "    response: { serializer: raw }\n"),
        route("compound", prefix: "/c/", extra: "    response: { serializer: compound, serializers: [xml, json] }\n"),
        route("env", prefix: "/e/", extra: "    output: { envelope: true, canonical: true }\n"),
        route("pass", prefix: "/pass/", extra: "    output: { on_failure: passthrough }\n"),
    ].joined()

    @Test func everySerializerAnswersThroughTheDaemon() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }

        let json = try proxy.get("/j/json")
        #expect(json.status == 200)
        #expect(json.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(json.header("Content-Type") == "application/json; charset=utf-8")
        #expect(json.header("X-Serializerd-Serializer") == "json")
        #expect(json.header("Cache-Control") == "max-age=60" && json.header("Vary") == "Accept")
        #expect(json.header("ETag") == nil && json.header("X-Other") == nil)
        #expect(json.header("Server-Timing")?.contains("upstream;dur=") == true)
        #expect(json.header("Server-Timing")?.contains("serialize;dur=") == true)
        #expect(json.header("X-Request-Id")?.count == 16)

        #expect(try proxy.get("/x/xml").text == #"{"rss":{"channel":{"item":[{"t":"a"}]}}}"#)
        #expect(try proxy.get("/p/plist").text == #"{"k":7}"#)
        let png = try proxy.get("/i/png?file=" + Fixture.path("images/sample.png"))
        #expect(png.text == #"{"format":"png","width":7,"height":5,"bytes":77}"#)
        #expect(try proxy.get("/f/form").text == #"{"a":"1","b":["x"],"c":{"d":"y"}}"#)
        #expect(try proxy.get("/t/text").text == "\"café\"")
        #expect(try proxy.get("/r/text").text == #"{"bytes":4,"base64":"Y2Fm6Q=="}"#)
        let compound = try proxy.get("/c/json")
        #expect(compound.text == #"{"a":[1,2.50,null],"b":"x/y"}"# && compound.header("X-Serializerd-Serializer") == "json")
    }

    @Test func outputOptionsAndEmptyBodies() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }

        let envelope = try proxy.get("/e/json?body=%7B%22b%22:1.50,%22a%22:1e2%7D")
        #expect(envelope.text.hasPrefix(#"{"status":200,"headers":{"#))
        #expect(envelope.text.hasSuffix(#""data":{"a":100,"b":1.5}}"#))
        // Every upstream header but hop-by-hop and framing ones, names lowercased.
        #expect(envelope.text.contains(#""cache-control":"max-age=60""#) && envelope.text.contains(#""x-other":"1""#))
        #expect(!envelope.text.contains("content-length") && !envelope.text.contains("keep-alive"))
        let notCanonical = try proxy.get("/e/json?body=%5B1e400%5D")
        #expect(notCanonical.status == 502)
        #expect(notCanonical.text.contains("urn:serializerd:serialization-failed") && notCanonical.text.contains("1e400"))

        let noContent = try proxy.get("/j/empty?status=204")
        #expect(noContent.status == 204 && noContent.body.isEmpty)
        let empty = try proxy.get("/j/empty?status=200&type=text/html")
        #expect(empty.status == 200 && empty.text == "null")
        let space = try proxy.get("/j/space")
        #expect(space.status == 200 && space.text == "null")
        let head = try proxy.get("/j/json", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)

        let passthrough = try proxy.get("/pass/json?status=500&type=text/html")
        #expect(passthrough.status == 500 && passthrough.text == #"{"a": [1, 2.50, null], "b": "x\/y"}"#)
        #expect(passthrough.header("Content-Type") == "text/html" && passthrough.header("X-Request-Id") != nil)
        #expect(passthrough.header("X-Other") == "1" && passthrough.header("ETag") == #""v1""#)
        #expect(passthrough.header("Keep-Alive") == nil)
        let passthroughSuccess = try proxy.get("/pass/json")
        #expect(passthroughSuccess.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)

        #expect(try proxy.get("/j/gzip").text == #"{"zipped":true}"#)
    }

    @Test func requestSerializersAndForwardedHeaders() throws {
        let proxy = try ProxyHarness(routes: [
            route("http", prefix: "/h/", extra: "    request: { serializer: http }\n"),
            route("json", prefix: "/js/", extra: "    request: { serializer: json }\n    headers: { X-Api-Key: secret }\n"),
        ].joined())
        defer { proxy.finish() }

        let query = try proxy.get("/h/echo?q=1", headers: [("Content-Type", "application/json")], body: Array(#"{"b":[1,2],"a":true}"#.utf8))
        let echoed = try #require(proxy.json(query))
        #expect(echoed["method"] as? String == "GET")
        #expect(echoed["path"] as? String == "/v1/echo?q=1&a=1&b%5B%5D=1&b%5B%5D=2")

        let post = try proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/x-www-form-urlencoded"),
                                                                        ("X-Request-Id", "client-id-7"), ("X-Api-Key", "client")],
                                 body: Array("z=1&a[]=2".utf8))
        #expect(post.header("X-Request-Id") == "client-id-7")
        let sent = try #require(proxy.json(post))
        #expect(sent["body"] as? String == #"{"z":"1","a":["2"]}"#)
        let headers = try #require(sent["headers"] as? [String: String])
        #expect(headers["content-type"] == "application/json")
        #expect(headers["x-request-id"] == "client-id-7")
        #expect(headers["x-forwarded-for"] == "127.0.0.1")
        #expect(headers["x-api-key"] == "secret")

        // End-to-end headers pass as sent; hop-by-hop, proxy-*, framing and the route's
        // own (any case) do not; an incoming X-Forwarded-For is extended.
        let mixed = try proxy.get("/h/echo", headers: [
            ("X-Forwarded-For", "10.0.0.1"), ("X-Custom", "v 1"), ("proxy-foo", "x"), ("Keep-Alive", "timeout=5"),
            ("Accept-Encoding", "identity;q=0"), ("User-Agent", "app/1.0"), ("x-forwarded-for", "10.0.0.2"),
        ])
        let forwarded = try #require(proxy.json(mixed)?["headers"] as? [String: String])
        #expect(forwarded["x-forwarded-for"] == "10.0.0.1, 10.0.0.2, 127.0.0.1")
        #expect(forwarded["x-custom"] == "v 1" && forwarded["user-agent"] == "app/1.0")
        #expect(forwarded["proxy-foo"] == nil && forwarded["keep-alive"] == nil)
        #expect(forwarded["accept-encoding"]?.contains("gzip") == true)
        #expect(forwarded["x-request-id"] == mixed.header("X-Request-Id"))
        let overridden = try proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/json"), ("X-API-KEY", "client")],
                                       body: Array("{}".utf8))
        #expect((proxy.json(overridden)?["headers"] as? [String: String])?["x-api-key"] == "secret")

        let bad = try proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/json")], body: Array("[1,2]".utf8))
        #expect(bad.status == 400)
        #expect(proxy.json(bad)?["type"] as? String == "urn:serializerd:bad-request")
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

    @Test func absoluteFormRequestsReachOnlyTheirHost() throws {
        let proxy = try ProxyHarness(routes: "  - name: legacy\n    match: { host: api.test, prefix: / }\n    upstream: {stub}\n")
        defer { proxy.finish() }
        let hit = try proxy.get("http://api.test/json")
        #expect(hit.status == 200 && hit.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        let otherHost = try proxy.get("http://elsewhere.test/json")
        #expect(otherHost.status == 404)
        #expect(try proxy.get("/json").status == 404)
    }
}
