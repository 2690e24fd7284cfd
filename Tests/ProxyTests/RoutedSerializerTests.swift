import Foundation
@testable import Proxy
import Serializers
import TestSupport
import Testing

/// A route's YAML for the `routes:` list; `{stub}` is the upstream.
func route(_ name: String, prefix: String, extra: String = "") -> String {
    "  - name: \(name)\n    match: { prefix: \(prefix) }\n    upstream: {stub}\n" + extra
}

/// Every serializer through a route, request serializers and the forwarded headers, in
/// process: the pipeline of one worker against the stub's scenarios held in memory.
@Suite struct RoutedSerializerTests {
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

    func json(_ exchange: RecordedExchange) -> [String: Any]? { exchange.replyJSON }

    /// `numbers: keep` (the default) never classifies a number — in JSON or in a property
    /// list — and reports none; `count` does and reports them. The classifiers note each
    /// document they look at on this thread, where the in-process pipeline runs.
    @Test func keepNeverLooksAtNumbersAndCountCounts() throws {
        let proxy = try InProcessProxy(routes: route("keep", prefix: "/k/") + route("count", prefix: "/c/", extra: "    output: { numbers: count }\n")
            + route("pkeep", prefix: "/pk/", extra: "    response: { serializer: plist }\n")
            + route("pcount", prefix: "/pc/", extra: "    response: { serializer: plist }\n    output: { numbers: count }\n"))
        let body = "body=%5B9007199254740993%2C1.5%2C12345678901234567890%5D"
        let before = NumberGuard.checksOnThisThread
        let kept = proxy.get("/k/json?" + body)
        #expect(kept.text == "[9007199254740993,1.5,12345678901234567890]")
        #expect(proxy.get("/pk/plist").status == 200)
        #expect(NumberGuard.checksOnThisThread == before, "keep classified numbers")
        let counted = proxy.get("/c/json?" + body)
        #expect(counted.text == kept.text)
        #expect(NumberGuard.checksOnThisThread > before)
        let afterJSON = NumberGuard.checksOnThisThread
        #expect(proxy.get("/pc/plist").status == 200)
        #expect(NumberGuard.checksOnThisThread > afterJSON)
        #expect(proxy.metric(#"serializerd_unsafe_numbers_total{route="count"}"#) == 2)
        #expect(proxy.metric(#"serializerd_unsafe_numbers_total{route="keep"}"#) ?? 0 == 0)
    }

    @Test func everySerializerAnswersThroughARoute() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let json = proxy.get("/j/json")
        #expect(json.status == 200)
        #expect(json.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(json.replyHeader("Content-Type") == "application/json; charset=utf-8")
        #expect(json.replyHeader("X-Serializerd-Serializer") == "json")
        #expect(json.replyHeader("Cache-Control") == "max-age=60" && json.replyHeader("Vary") == "Accept")
        #expect(json.replyHeader("ETag") == nil && json.replyHeader("X-Other") == nil)
        #expect(json.replyHeader("Server-Timing")?.contains("upstream;dur=") == true)
        #expect(json.replyHeader("Server-Timing")?.contains("serialize;dur=") == true)
        #expect(json.replyHeader("X-Request-Id")?.count == 16)
        // The upstream's Date is forwarded (a valid IMF-fixdate), not the server's.
        #expect(json.replyHeader("Date") == "Fri, 15 Jan 2027 08:00:00 GMT")

        #expect(proxy.get("/x/xml").text == #"{"rss":{"channel":{"item":[{"t":"a"}]}}}"#)
        #expect(proxy.get("/p/plist").text == #"{"k":7}"#)
        let png = proxy.get("/i/png?file=" + Fixture.path("images/sample.png"))
        #expect(png.text == #"{"format":"png","width":7,"height":5,"bytes":77}"#)
        #expect(proxy.get("/f/form").text == #"{"a":"1","b":["x"],"c":{"d":"y"}}"#)
        #expect(proxy.get("/t/text").text == "\"café\"")
        #expect(proxy.get("/r/text").text == #"{"bytes":4,"base64":"Y2Fm6Q=="}"#)
        let compound = proxy.get("/c/json")
        #expect(compound.text == #"{"a":[1,2.50,null],"b":"x/y"}"# && compound.replyHeader("X-Serializerd-Serializer") == "json")
    }

    @Test func outputOptionsAndEmptyBodies() throws {
        let proxy = try InProcessProxy(routes: Self.routes)
        let envelope = proxy.get("/e/json?body=%7B%22b%22:1.50,%22a%22:1e2%7D")
        #expect(envelope.text.hasPrefix(#"{"status":200,"headers":{"#))
        #expect(envelope.text.hasSuffix(#""data":{"a":100,"b":1.5}}"#))
        // Every upstream header but hop-by-hop and framing ones, names lowercased.
        #expect(envelope.text.contains(#""cache-control":"max-age=60""#) && envelope.text.contains(#""x-other":"1""#))
        #expect(!envelope.text.contains("content-length") && !envelope.text.contains("keep-alive"))
        let notCanonical = proxy.get("/e/json?body=%5B1e400%5D")
        #expect(notCanonical.status == 502)
        #expect(notCanonical.text.contains("urn:serializerd:serialization-failed") && notCanonical.text.contains("1e400"))

        let noContent = proxy.get("/j/empty?status=204")
        #expect(noContent.status == 204 && noContent.replyBody.isEmpty)
        let empty = proxy.get("/j/empty?status=200&type=text/html")
        #expect(empty.status == 200 && empty.text == "null")
        let space = proxy.get("/j/space")
        #expect(space.status == 200 && space.text == "null")
        let head = proxy.get("/j/json", method: "HEAD")
        #expect(head.status == 200 && head.replyBody.isEmpty)

        let passthrough = proxy.get("/pass/json?status=500&type=text/html")
        #expect(passthrough.status == 500 && passthrough.text == #"{"a": [1, 2.50, null], "b": "x\/y"}"#)
        #expect(passthrough.replyHeader("Content-Type") == "text/html" && passthrough.replyHeader("X-Request-Id") != nil)
        #expect(passthrough.replyHeader("X-Other") == "1" && passthrough.replyHeader("ETag") == #""v1""#)
        #expect(passthrough.replyHeader("Keep-Alive") == nil)
        #expect(proxy.get("/pass/json").text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
    }

    @Test func requestSerializersAndForwardedHeaders() throws {
        let proxy = try InProcessProxy(routes: [
            route("http", prefix: "/h/", extra: "    request: { serializer: http }\n"),
            route("json", prefix: "/js/", extra: "    request: { serializer: json }\n    headers: { X-Api-Key: secret }\n"),
        ].joined())
        let query = proxy.get("/h/echo?q=1", headers: [("Content-Type", "application/json")], body: Array(#"{"b":[1,2],"a":true}"#.utf8))
        let echoed = try #require(json(query))
        #expect(echoed["method"] as? String == "GET")
        #expect(echoed["path"] as? String == "/v1/echo?q=1&a=1&b%5B%5D=1&b%5B%5D=2")

        let post = proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/x-www-form-urlencoded"),
                                                                    ("X-Request-Id", "client-id-7"), ("X-Api-Key", "client")],
                             body: Array("z=1&a[]=2".utf8))
        #expect(post.replyHeader("X-Request-Id") == "client-id-7")
        let sent = try #require(json(post))
        #expect(sent["body"] as? String == #"{"z":"1","a":["2"]}"#)
        let headers = try #require(sent["headers"] as? [String: String])
        #expect(headers["content-type"] == "application/json")
        #expect(headers["x-request-id"] == "client-id-7")
        #expect(headers["x-forwarded-for"] == "127.0.0.1")
        #expect(headers["x-api-key"] == "secret")

        // End-to-end headers pass as sent; hop-by-hop, proxy-*, framing and the route's
        // own (any case) do not; an incoming X-Forwarded-For is extended.
        let mixed = proxy.get("/h/echo", headers: [
            ("X-Forwarded-For", "10.0.0.1"), ("X-Custom", "v 1"), ("proxy-foo", "x"), ("Keep-Alive", "timeout=5"),
            ("User-Agent", "app/1.0"), ("x-forwarded-for", "10.0.0.2"),
        ])
        let forwarded = try #require(json(mixed)?["headers"] as? [String: String])
        #expect(forwarded["x-forwarded-for"] == "10.0.0.1, 10.0.0.2, 127.0.0.1")
        #expect(forwarded["x-custom"] == "v 1" && forwarded["user-agent"] == "app/1.0")
        #expect(forwarded["proxy-foo"] == nil && forwarded["keep-alive"] == nil && forwarded["host"] == nil)
        #expect(forwarded["x-request-id"] == mixed.replyHeader("X-Request-Id"))
        let overridden = proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/json"), ("X-API-KEY", "client")],
                                   body: Array("{}".utf8))
        #expect((json(overridden)?["headers"] as? [String: String])?["x-api-key"] == "secret")

        let bad = proxy.get("/js/echo", method: "POST", headers: [("Content-Type", "application/json")], body: Array("[1,2]".utf8))
        #expect(bad.status == 400)
        #expect(json(bad)?["type"] as? String == "urn:serializerd:bad-request")
        #expect(proxy.upstream.received.count == 4)   // the bad body never left
    }

    @Test func absoluteFormRequestsReachOnlyTheirHost() throws {
        let proxy = try InProcessProxy(routes: "  - name: legacy\n    match: { host: api.test, prefix: / }\n    upstream: {stub}\n")
        let hit = proxy.get("http://api.test/json", host: "api.test")
        #expect(hit.status == 200 && hit.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(proxy.get("http://elsewhere.test/json", host: "elsewhere.test").status == 404)
        #expect(proxy.get("/json").status == 404)
    }
}
