import Foundation
import TestSupport
import Testing

/// DESIGN §3's failure table, row by row, through the real daemon.
@Suite(.timeLimit(.minutes(5)))
struct ProxyFailureTests {
    static let routes = [
        route("api", prefix: "/api/", extra: "    match: { prefix: /api/, methods: [GET, POST] }\n"),
        route("slow", prefix: "/slow/", extra: "    timeout: 300ms\n"),
        "  - name: down\n    match: { prefix: /down/ }\n    upstream: http://127.0.0.1:9/\n",
        route("redirect", prefix: "/follow/", extra: "    follow_redirects: 2\n"),
        route("noredirect", prefix: "/stay/", extra: "    follow_redirects: 0\n"),
    ].joined().replacingOccurrences(of: "    match: { prefix: /api/ }\n", with: "")

    func problem(_ proxy: ProxyHarness, _ response: RawResponse) -> (type: String?, code: Int?) {
        let doc = proxy.json(response)
        return ((doc?["type"] as? String)?.replacingOccurrences(of: "urn:serializerd:", with: ""), doc?["code"] as? Int)
    }

    @Test func everyFailureRowHasItsStatusTypeAndCode() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "limits: { max_response_body: 64KiB, max_request_body: 1KiB }\n")

        func expectRow(_ target: String, method: String = "GET", body: [UInt8] = [], _ status: Int, _ type: String, _ code: Int,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
            let response = try proxy.get(target, method: method, body: body)
            let (gotType, gotCode) = problem(proxy, response)
            #expect(response.status == status, "\(target): \(response.text)", sourceLocation: sourceLocation)
            #expect(gotType == type && gotCode == code, "\(target): \(response.text)", sourceLocation: sourceLocation)
            #expect(response.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
            #expect(response.header("X-Request-Id") != nil, sourceLocation: sourceLocation)
        }

        try expectRow("/api/json?status=404", 404, "unacceptable-status", -1011)
        try expectRow("/api/json?status=302", 502, "unacceptable-status", -1011)
        try expectRow("/api/json?type=text/html", 502, "unacceptable-content-type", -1016)
        try expectRow("/api/json?body=oops", 502, "serialization-failed", 3840)
        try expectRow("/api/json?body=oops&status=500", 500, "serialization-failed", 3840)
        try expectRow("/down/x", 502, "upstream-unavailable", 7)
        try expectRow("/api/garbage", 502, "upstream-unavailable", 1)
        try expectRow("/slow/slow?seconds=2", 504, "upstream-timeout", 28)
        try expectRow("/api/big?bytes=200000", 502, "upstream-body-too-large", 63)
        try expectRow("/nowhere", 404, "no-route", 404)
        try expectRow("/api/json", method: "DELETE", 405, "method-not-allowed", 405)
        try expectRow("/api/%2e%2e/etc/passwd", 400, "invalid-path", 400)
        try expectRow("/api//etc/passwd", 400, "invalid-path", 400)
        try expectRow("/-/nothing", 404, "no-route", 404)

        let reset = try proxy.get("/api/reset")
        #expect(reset.status == 502 && problem(proxy, reset).type == "upstream-unavailable")

        let notAllowed = try proxy.get("/api/json", method: "DELETE")
        #expect(notAllowed.header("Allow") == "GET, POST")
        let connect = try proxy.get("api.example.org:443", method: "CONNECT")
        #expect(connect.status == 405 && connect.header("Allow")?.contains("GET") == true)

        let notFound = proxy.json(try proxy.get("/api/json?status=404"))
        #expect((notFound?["upstream"] as? [String: Any])?["body"] as? [String: Any] != nil)
        #expect(notFound?["route"] as? String == "api")

        let tooLarge = try proxy.get("/api/echo", method: "POST", body: Array(repeating: UInt8(ascii: "a"), count: 2000))
        #expect(tooLarge.status == 413)
        #expect(proxy.json(tooLarge)?["type"] as? String == "urn:serializerd:request-too-large")

        // Redirects are followed (5 by default, like URLSession) unless a route says 0.
        #expect(try proxy.get("/follow/redirect").text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(try proxy.get("/api/redirect").text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        #expect(try proxy.get("/stay/redirect").status == 502)
        #expect(proxy.finish() == 0)
    }
}
