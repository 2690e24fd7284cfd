import Foundation
import TestSupport
import Testing

/// DESIGN §3–§5 points a user relies on, through the real daemon and a real upstream.
@Suite(.timeLimit(.minutes(5)))
struct ContractTests {
    static let routes = [
        route("api", prefix: "/api/"),
        route("pass", prefix: "/pass/", extra: "    output: { on_failure: passthrough }\n"),
        route("env", prefix: "/env/", extra: "    output: { envelope: true }\n"),
        route("compound", prefix: "/compound/", extra: "    response: { serializer: compound, serializers: [json, xml] }\n"),
        route("jsonbody", prefix: "/jsonbody/", extra: "    request: { serializer: json }\n"),
        route("formbody", prefix: "/formbody/", extra: "    request: { serializer: http }\n"),
    ].joined()

    func echoed(_ response: RawResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.text)")
    }

    /// §4: percent-escapes other than encoded dots and separators are forwarded as sent.
    @Test func percentEscapesReachTheUpstreamAsSent() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/a%20b%2Cc/%00%41/echo?q=%20")
        #expect(reply.status == 200)
        #expect(try echoed(reply)["path"] as? String == "/v1/a%20b%2Cc/%00%41/echo?q=%20")
        #expect(try proxy.get("/api/a%2Fb/echo").status == 400)
        #expect(try proxy.get("/api/%2e%2E/echo").status == 400)
    }

    /// §4 and RFC 9110 §7.6.1: fields a Connection header names are hop-by-hop, both ways.
    @Test func fieldsNamedByConnectionStayOnTheirHop() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let up = try proxy.get("/api/echo", headers: [("Connection", "keep-alive, X-Drop-Me"), ("X-Drop-Me", "1"),
                                                      ("connection", "x-also"), ("X-Also", "2"), ("X-Keep", "3")])
        let headers = try #require(try echoed(up)["headers"] as? [String: String])
        #expect(headers["x-keep"] == "3")
        #expect(headers["x-drop-me"] == nil && headers["x-also"] == nil && headers["connection"] == nil)

        // The upstream names Cache-Control and X-Other in its Connection header.
        let named = "h=Connection:Cache-Control,%20X-Other"
        let normalized = try proxy.get("/api/json?\(named)")
        #expect(normalized.status == 200 && normalized.header("Cache-Control") == nil && normalized.header("Vary") == "Accept")
        let passed = try proxy.get("/pass/json?status=500&\(named)")
        #expect(passed.status == 500 && passed.header("X-Other") == nil && passed.header("ETag") == #""v1""#)
        let envelope = try proxy.get("/env/json?\(named)").text
        #expect(!envelope.contains("x-other") && !envelope.contains("cache-control") && envelope.contains(#""etag""#))
    }

    /// §3: an upstream 429/503 answered with a problem document keeps its Retry-After.
    /// (Each on a route of its own: the pause it asks for holds its route, §11.)
    @Test func retryAfterGoesOutWithTheUpstreamsStatus() throws {
        let proxy = try ProxyHarness(routes: Self.routes + route("r429", prefix: "/r429/") + route("r503", prefix: "/r503/"))
        defer { proxy.finish() }
        // A problem of the daemon's own making (not the upstream's status) does not.
        let local = try proxy.get("/api/json?type=text/html&h=Retry-After:30")
        #expect(local.status == 502 && local.header("Retry-After") == nil)
        for status in [429, 503] {
            let reply = try proxy.get("/r\(status)/json?status=\(status)&h=Retry-After:30")
            #expect(reply.status == status && reply.header("Retry-After") == "30")
            #expect(reply.header("Content-Type") == "application/problem+json")
        }
    }

    /// §3/§5: a compound's json member parses a 500 body; the problem carries the value.
    @Test func aCompoundKeepsTheParsedBodyOfAFailedStatus() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/compound/json?status=500&body=%7B%22e%22:1%7D")
        #expect(reply.status == 500)
        let problem = try echoed(reply)
        #expect(problem["type"] as? String == "urn:serializerd:unacceptable-status")
        let upstream = try #require(problem["upstream"] as? [String: Any])
        #expect((upstream["body"] as? [String: Any])?["e"] as? Int == 1, "\(reply.text)")
    }

    /// §4: `json` with no parameters sends no body and no Content-Type (libcurl would add
    /// application/x-www-form-urlencoded to a POST).
    @Test func noParametersMeansNoBodyAndNoContentType() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        for prefix in ["/jsonbody/", "/api/"] {
            let reply = try proxy.get(prefix + "echo", method: "POST")
            let echo = try echoed(reply)
            let headers = try #require(echo["headers"] as? [String: String])
            #expect(headers["content-type"] == nil, "\(prefix): \(headers)")
            #expect(echo["body"] as? String == "")
        }
        // With parameters, each serializer's own type still goes out.
        let json = try proxy.get("/jsonbody/echo", method: "POST", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                 body: Array("a=1".utf8))
        #expect((try echoed(json)["headers"] as? [String: String])?["content-type"] == "application/json")
        #expect(try echoed(json)["body"] as? String == #"{"a":"1"}"#)
        let form = try proxy.get("/formbody/echo", method: "POST", headers: [("Content-Type", "application/json")], body: Array(#"{"a":1}"#.utf8))
        #expect((try echoed(form)["headers"] as? [String: String])?["content-type"] == "application/x-www-form-urlencoded")
        // A passthrough body keeps the client's type.
        let typed = try proxy.get("/api/echo", method: "PUT", headers: [("Content-Type", "text/plain")], body: Array("x".utf8))
        #expect((try echoed(typed)["headers"] as? [String: String])?["content-type"] == "text/plain")
    }

    /// §2: without `follow_redirects`, up to 5 redirects are followed (like URLSession).
    @Test func redirectsAreFollowedByDefault() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/redirect")
        #expect(reply.status == 200 && reply.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
    }

    /// Problems a setting decided name that setting (issue: "problem documents that help").
    @Test func problemsNameTheSettingToChange() throws {
        let proxy = try ProxyHarness(routes: Self.routes + route("xml", prefix: "/xml/", extra: "    response: { serializer: xml, acceptable_status_codes: [200, 404] }\n"),
                                     top: "limits: { max_request_body: 1KiB }\n")
        defer { proxy.finish() }
        func detail(_ target: String, method: String = "GET", body: [UInt8] = []) throws -> String? {
            proxy.json(try proxy.get(target, method: method, body: body))?["detail"] as? String
        }
        #expect(try detail("/api/json?type=text/html")
                == "accepted content types: application/json, text/json, text/javascript, */*+json (acceptable_content_types)")
        #expect(try detail("/xml/json?status=500")
                == "accepted statuses: 200,404 (acceptable_status_codes); accepted content types: application/xml, text/xml, */*+xml (acceptable_content_types)")
        #expect(try detail("/nowhere/at/all") == "no route matches GET /nowhere/at/all; GET /-/routes lists the configured routes")
        #expect(try detail("/api/echo", method: "POST", body: Array(repeating: 0x61, count: 2000)) == "the body exceeds 1024 bytes (limits.max_request_body)")
    }
}
