import Serializers
@testable import Tapes
import Telemetry
import Testing

@Suite struct TapeMatchTests {
    static func request(_ url: String, method: String = "GET", headers: [(String, String)] = [], body: String = "") -> TapeRequest {
        TapeRequest(method: method, url: url, headers: HeaderFields(headers), body: Array(body.utf8))
    }

    static func entry(_ request: TapeRequest, _ answer: String) -> TapeEntry {
        TapeEntry(request: request, status: 200, responseHeaders: HeaderFields([("Content-Type", "application/json")]),
                  responseBody: Array(answer.utf8), startedAt: 0, duration: 0)
    }

    static func tape(_ entries: [TapeEntry], _ match: TapeMatch = TapeMatch()) -> Tape {
        Tape(path: "/nonexistent/t.har", entries: entries, match: match, redaction: Redaction())
    }

    @Test func queryOrderHostAndIgnoredParametersDoNotMatterTheRestDoes() {
        let tape = Self.tape([Self.entry(Self.request("http://staging/v1/a?b=2&a=1&ts=5"), "one")], TapeMatch(ignoreQuery: ["ts"]))
        #expect(tape.replay(Self.request("http://localhost:9/v1/a?a=1&b=2&ts=99")).map { String(decoding: $0.body, as: UTF8.self) } == "one")
        #expect(tape.replay(Self.request("http://staging/v1/a?a=1&b=3")) == nil)
        #expect(tape.replay(Self.request("http://staging/v1/a?a=1&b=2", method: "POST")) == nil)
        #expect(tape.replay(Self.request("http://staging/v1/b?a=1&b=2")) == nil)
    }

    @Test func redactedValuesMatchByNameOnly() {
        // The tape holds what capture left: the key's value is gone.
        let recorded = Self.request("http://up/v1/a?api_key=[redacted]&x=1", headers: [("Authorization", "[redacted]"), ("X-Tenant", "t1")])
        let tape = Self.tape([Self.entry(recorded, "r")], TapeMatch(headers: ["Authorization", "X-Tenant"]))
        #expect(tape.replay(Self.request("http://up/v1/a?x=1&api_key=live", headers: [("authorization", "Bearer live"), ("x-tenant", "t1")])) != nil)
        #expect(tape.replay(Self.request("http://up/v1/a?x=1&api_key=live", headers: [("authorization", "Bearer live"), ("x-tenant", "t2")])) == nil)
        #expect(tape.replay(Self.request("http://up/v1/a?x=1&api_key=live", headers: [("x-tenant", "t1")])) == nil)
    }

    @Test func jsonBodiesMatchWhenEqualAsJSONLessTheIgnoredPointers() {
        let json = TapeMatch(body: .json, ignoreJSON: [Redaction.tokens("/at")!, Redaction.tokens("/items/*/id")!])
        let recorded = Self.request("http://up/v1/o", method: "POST", body: #"{"a":1,"at":"monday","items":[{"id":1,"n":"x"}]}"#)
        let tape = Self.tape([Self.entry(recorded, "r")], json)
        // JSON-equal: member order, whitespace and a number's spelling do not matter.
        #expect(tape.replay(Self.request("http://up/v1/o", method: "POST", body: #"{ "items":[{"n":"x","id":7}], "at":"friday", "a":1.0e0 }"#)) != nil)
        #expect(tape.replay(Self.request("http://up/v1/o", method: "POST", body: #"{"a":2,"at":"monday","items":[{"id":1,"n":"x"}]}"#)) == nil)
        let exact = Self.tape([Self.entry(recorded, "r")], TapeMatch(body: .exact))
        #expect(exact.replay(Self.request("http://up/v1/o", method: "POST", body: #"{"a":1,"at":"monday","items":[{"id":1,"n":"x"}]}"#)) != nil)
        #expect(exact.replay(Self.request("http://up/v1/o", method: "POST", body: #"{"a":1, "at":"monday","items":[{"id":1,"n":"x"}]}"#)) == nil)
        // Without body matching, the body does not matter.
        #expect(Self.tape([Self.entry(recorded, "r")]).replay(Self.request("http://up/v1/o", method: "POST", body: "anything")) != nil)
    }

    @Test func repeatsPlayTheSequenceThenTheLastAgain() {
        let r = Self.request("http://up/v1/s")
        let tape = Self.tape([Self.entry(r, "1"), Self.entry(Self.request("http://up/v1/other"), "x"), Self.entry(r, "2"), Self.entry(r, "3")])
        let answers = (0..<5).map { _ in tape.replay(r).map { String(decoding: $0.body, as: UTF8.self) } ?? "-" }
        #expect(answers == ["1", "2", "3", "3", "3"])
    }

    @Test func aMissNamesTheNearestRecordingsAndWhatDiffers() {
        let tape = Self.tape([
            Self.entry(Self.request("http://up/v1/users?page=1&size=10"), "p1"),
            Self.entry(Self.request("http://up/v1/users/7", method: "DELETE"), "d"),
        ], TapeMatch(headers: ["X-Tenant"]))
        let detail = tape.missDetail(Self.request("http://up/v1/users?page=2&sort=name", headers: [("X-Tenant", "a")]))
        #expect(detail.contains("nearest: GET /v1/users?page=1&size=10"))
        #expect(detail.contains("query page") && detail.contains("query size (missing)") && detail.contains("query sort (not recorded)"))
        #expect(detail.contains("header x-tenant"))
        let otherPath = tape.missDetail(Self.request("http://up/v1/users/8", method: "DELETE"))
        #expect(otherPath.contains("DELETE /v1/users/7") && otherPath.contains("path"))
        #expect(Self.tape([]).missDetail(Self.request("http://up/v1/x")).contains("is empty"))
    }

    /// An index, not a scan: 100,000 recordings, each found by its own request.
    @Test func aLargeTapeFindsEveryRecording() {
        let entries = (0..<100_000).map { Self.entry(Self.request("http://up/v1/item/\($0)?v=\($0 % 7)"), String($0)) }
        let tape = Self.tape(entries)
        for k in stride(from: 0, to: 100_000, by: 997) {
            #expect(tape.replay(Self.request("http://other/v1/item/\(k)?v=\(k % 7)")).map { String(decoding: $0.body, as: UTF8.self) } == String(k))
        }
        #expect(tape.count == 100_000)
    }
}
