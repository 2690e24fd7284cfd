import Proxy
import Serializers
import Testing

@Suite struct ProblemDocumentTests {
    func render(_ failure: ProxyFailure, route: String? = "github", id: String? = "req-1") throws -> JSONValue {
        try JSONValue.parse(ProblemDocument.render(failure, route: route, requestID: id))
    }

    func evidence(status: Int, type: String?, body: String, parsed: NormalizedJSON? = nil) -> UpstreamEvidence {
        UpstreamEvidence(UpstreamResponse(status: status, contentType: type, body: Array(body.utf8)), shownURL: "https://api.example.org/x",
                         parsed: parsed)
    }

    @Test func statusFailureMatchesTheDesignExample() throws {
        let parsed = NormalizedJSON(try JSONValue.parse(#"{"message":"Not Found"}"#))
        let failure = ProxyFailure.response(.unacceptableStatus(404, underlying: .unacceptableContentType("text/html")),
                                            upstream: evidence(status: 404, type: "application/json", body: "{}", parsed: parsed))
        let doc = try render(failure)
        #expect(doc["type"] == .string("urn:serializerd:unacceptable-status"))
        #expect(doc["title"] == .string("Request failed: not found (404)"))
        #expect(doc["status"] == .number("404"))
        #expect(doc["code"] == .number("-1011"))
        #expect(doc["route"] == .string("github") && doc["request_id"] == .string("req-1"))
        #expect(doc["upstream"]?["url"] == .string("https://api.example.org/x"))
        #expect(doc["upstream"]?["body"]?["message"] == .string("Not Found"))
        #expect(doc["underlying"]?["type"] == .string("urn:serializerd:unacceptable-content-type"))
        #expect(doc["underlying"]?["code"] == .number("-1016"))
        #expect(failure.clientStatus == 404)
    }

    @Test func clientStatusFollowsTheUnacceptableUpstreamStatus() {
        let e = evidence(status: 500, type: "application/json", body: "oops")
        let parseOverStatus = ProxyFailure.response(
            .serializationFailed(serializer: "json", detail: "x", underlying: .unacceptableStatus(500, underlying: nil)), upstream: e)
        #expect(parseOverStatus.clientStatus == 500)
        #expect(ProxyFailure.response(.unacceptableStatus(302, underlying: nil), upstream: e).clientStatus == 502)
        #expect(ProxyFailure.response(.unacceptableContentType("text/html"), upstream: e).clientStatus == 502)
        #expect(ProxyFailure.response(.serializationFailed(serializer: "json", detail: "x", underlying: nil), upstream: e).clientStatus == 502)
    }

    @Test func everyTableRowHasItsStatusTypeAndCode() {
        let rows: [(ProxyFailure, Int, String, Int)] = [
            (.upstreamUnavailable(curlCode: 7, message: "refused", url: nil), 502, "upstream-unavailable", 7),
            (.upstreamTimeout(url: nil, seconds: 1), 504, "upstream-timeout", 28),
            (.upstreamBodyTooLarge(limit: 10, url: nil), 502, "upstream-body-too-large", 63),
            (.noRoute("GET /x"), 404, "no-route", 404), (.methodNotAllowed(allow: ["GET"]), 405, "method-not-allowed", 405),
            (.invalidPath(".."), 400, "invalid-path", 400), (.headersTooLarge(limit: 1), 431, "headers-too-large", 431),
            (.forbidden(host: nil), 403, "forbidden", 403), (.badRequest("x"), 400, "bad-request", -1016),
            (.requestTooLarge(limit: 1), 413, "request-too-large", 413), (.unavailable, 503, "unavailable", 503),
        ]
        for (failure, status, suffix, code) in rows {
            #expect(failure.clientStatus == status && failure.typeSuffix == suffix && failure.code == code, "\(failure)")
        }
    }

    @Test func unparsedBodyIsShownAsTextCutAtACharacterBoundary() throws {
        let long = String(repeating: "a", count: 4095) + "é" + String(repeating: "b", count: 100)
        let doc = try render(.response(.unacceptableContentType("text/html"), upstream: evidence(status: 200, type: "text/html", body: long)))
        let text = try #require(doc["upstream"]?["body"]?.stringValue)
        #expect(text == String(repeating: "a", count: 4095))
    }

    @Test func binaryBodyIsOmitted() throws {
        var e = evidence(status: 200, type: "image/png", body: "")
        e.body = [0x89, 0xFF, 0x00]
        let doc = try render(.response(.unacceptableContentType("image/png"), upstream: e))
        #expect(doc["upstream"]?["body"] == nil)
        #expect(doc["upstream"]?["status"] == .number("200"))
    }

    @Test func serializationFailureCarriesDetailAndUnderlyingChain() throws {
        let failure = ProxyFailure.response(
            .serializationFailed(serializer: "json", detail: "unexpected 'o' at byte 0", underlying: .unacceptableStatus(500, underlying: nil)),
            upstream: evidence(status: 500, type: "application/json", body: "oops"))
        let doc = try render(failure, route: nil, id: nil)
        #expect(doc["type"] == .string("urn:serializerd:serialization-failed"))
        #expect(doc["code"] == .number("3840") && doc["status"] == .number("500"))
        #expect(doc["detail"] == .string("json: unexpected 'o' at byte 0"))
        #expect(doc["underlying"]?["title"] == .string("Request failed: internal server error (500)"))
        #expect(doc["route"] == nil)
    }
}
