import Foundation
import TestSupport
import Testing

/// DESIGN §10 through the daemon: a route's `contract` (a JSON Schema on the normalized
/// output) in `report` and `enforce` mode, on JSON, XML and plist upstreams.
@Suite(.timeLimit(.minutes(5)))
struct SchemaContractTests {
    /// The stub's /json answer is {"a": [1, 2.50, null], "b": "x/y"}: null breaks `items`.
    static let numbers = #"{"type": "object", "required": ["a"], "properties": {"a": {"type": "array", "items": {"type": "number"}}}}"#
    /// Its /xml answer normalizes to one `item`, an object: the XML singleton.
    static let feed = #"{"properties": {"rss": {"properties": {"channel": {"properties": {"item": {"type": "array"}}}}}}}"#
    static let plist = #"{"properties": {"k": {"type": "string"}}}"#
    static let versionOne = #"{"properties": {"v": {"const": 1}}, "required": ["v"]}"#

    /// OpenAPI 3.0 in YAML: `/json` by a component (its `b` longer than 2), `/cached/{key}`
    /// with 3.0's boolean `exclusiveMinimum` (v must be above 1), nothing for `/xml`.
    static let openAPI = """
    openapi: 3.0.3
    info: { title: stub, version: "1" }
    servers: [{ url: "https://api.example.com/v1" }]
    paths:
      /json:
        get:
          responses:
            "200":
              description: ok
              content:
                application/json:
                  schema: { $ref: "#/components/schemas/Numbers" }
      /cached/{key}:
        get:
          responses:
            default:
              description: any
              content:
                application/json:
                  schema:
                    type: object
                    properties:
                      v: { type: integer, minimum: 1, exclusiveMinimum: true, nullable: true }
    components:
      schemas:
        Numbers:
          type: object
          properties:
            a: { type: array, items: { type: number, nullable: true } }
            b: { type: string, maxLength: 2, description: "${NOT_SUBSTITUTED}" }
    """

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("contracts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in [("numbers", Self.numbers), ("feed", Self.feed), ("plist", Self.plist), ("v1", Self.versionOne)] {
            try text.write(to: directory.appendingPathComponent(name + ".json"), atomically: true, encoding: .utf8)
        }
        try Self.openAPI.write(to: directory.appendingPathComponent("stub.yaml"), atomically: true, encoding: .utf8)
    }

    func contract(_ name: String, _ mode: String) -> String {
        "    contract: { schema: \(directory.appendingPathComponent(name + ".json").path), mode: \(mode) }\n"
    }

    func routes() -> String {
        [route("report", prefix: "/report/", extra: contract("numbers", "report")),
         route("enforce", prefix: "/enforce/", extra: contract("numbers", "enforce")),
         route("xml", prefix: "/xml/", extra: "    response: { serializer: xml }\n" + contract("feed", "enforce")),
         route("plist", prefix: "/plist/", extra: "    response: { serializer: plist }\n" + contract("plist", "enforce")),
         route("stale", prefix: "/stale/", extra: "    cache: { stale_if_invalid: 60s }\n" + contract("v1", "enforce")),
         route("openapi", prefix: "/openapi/", extra: "    contract: { openapi: \(directory.appendingPathComponent("stub.yaml").path), mode: enforce }\n")].joined()
    }

    @Test func reportForwardsCountsAndKeepsTheViolations() throws {
        let proxy = try ProxyHarness(routes: routes())
        defer { proxy.finish(); try? FileManager.default.removeItem(at: directory) }
        let reply = try proxy.get("/report/json", headers: [("X-Request-Id", "reported")])
        #expect(reply.status == 200)
        #expect(reply.text == #"{"a":[1,2.50,null],"b":"x/y"}"#)
        // /-/routes names each route's contract file and mode.
        let routes = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]] ?? []
        let enforced = routes.first { $0["name"] as? String == "enforce" }?["contract"] as? [String: Any]
        #expect(enforced?["mode"] as? String == "enforce" && (enforced?["file"] as? String)?.hasSuffix("numbers.json") == true
                && enforced?["drift_after"] is NSNull, "\(routes)")
        // Counted once per failing answer, and a passing one is not counted.
        #expect(try proxy.get("/report/json?body=%7B%22a%22%3A%5B1%5D%7D").status == 200)
        var count: Double?
        #expect(NetworkConditionsTests.poll {
            count = Metrics((try? proxy.get("/metrics").text) ?? "")["serializerd_contract_violations_total{route=\"report\"}"]
            return count != nil
        })
        #expect(count == 1)
        // Evidenced like a failure: the pointer, the keyword and the schema location.
        let one = try #require(proxy.json(try proxy.get("/-/failures/reported")))
        let problem = try #require(one["problem"] as? [String: Any])
        #expect(problem["type"] as? String == "urn:serializerd:contract-violation")
        let detail = try #require(problem["detail"] as? String)
        #expect(detail.contains("1 violation of"), "\(detail)")
        #expect(detail.contains("/a/2: type (file://\(directory.path)/numbers.json#/properties/a/items/type): is null, not number"), "\(detail)")
    }

    @Test func enforceFailsWithTheViolationNamed() throws {
        let proxy = try ProxyHarness(routes: routes())
        defer { proxy.finish(); try? FileManager.default.removeItem(at: directory) }
        let refused = try proxy.get("/enforce/json")
        #expect(refused.status == 502)
        let problem = try #require(proxy.json(refused))
        #expect(problem["type"] as? String == "urn:serializerd:contract-violation")
        #expect(problem["code"] as? Int == -1017)
        #expect((problem["detail"] as? String)?.contains("/a/2: type") == true)
        // What the serializer made of the body is still shown.
        #expect(((problem["upstream"] as? [String: Any])?["body"] as? [String: Any])?["b"] as? String == "x/y")
        // An answer that meets the schema passes.
        let passing = try proxy.get("/enforce/json?body=%7B%22a%22%3A%5B1%2C2%5D%7D")
        #expect(passing.status == 200 && passing.text == #"{"a":[1,2]}"#)
        // The normalizer checks as it writes: whitespace it drops changes nothing, and a
        // member name it cannot match byte for byte (an escape) is decided by the tree.
        let spaced = try proxy.get("/enforce/json?body=" + Self.query(#"{ "a" : [ 1 , 2 ] , "\u0062" : "x" }"#))
        #expect(spaced.status == 200 && spaced.text == #"{"a":[1,2],"b":"x"}"#, "\(spaced.text)")
        let escaped = try proxy.get("/enforce/json?body=" + Self.query(#"{ "\u0061" : [ null ] }"#))
        #expect(escaped.status == 502 && (proxy.json(escaped)?["detail"] as? String)?.contains("/a/0: type") == true, "\(escaped.text)")
        // The XML singleton and a plist's integer are refused after their serializers.
        let xml = try proxy.get("/xml/xml")
        #expect(xml.status == 502 && (proxy.json(xml)?["detail"] as? String)?.contains("/rss/channel/item: type") == true, "\(xml.text)")
        let plist = try proxy.get("/plist/plist")
        #expect(plist.status == 502 && (proxy.json(plist)?["detail"] as? String)?.contains("/k: type") == true, "\(plist.text)")
    }

    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test func aStoredAnswerStandsInForOneThatBreaksTheContract() throws {
        let proxy = try ProxyHarness(routes: routes())
        defer { proxy.finish(); try? FileManager.default.removeItem(at: directory) }
        let key = "contract-\(UUID().uuidString.prefix(8))"
        let first = try proxy.get("/stale/cached/\(key)?cc=max-age=0&noetag")
        #expect(first.status == 200 && first.text.contains("\"v\":1"))
        #expect(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachemode/\(key)?v=2").status == 200)
        // Version 2 breaks the contract: the stored version 1 is served, marked stale.
        let second = try proxy.get("/stale/cached/\(key)?cc=max-age=0&noetag")
        #expect(second.status == 200 && second.text.contains("\"v\":1"), "\(second.text)")
        #expect(second.header("Cache-Status")?.contains("stale") == true, "\(second.header("Cache-Status") ?? "-")")
    }

    @Test func anOpenAPIDocumentPicksTheSchemaByPathMethodAndStatus() throws {
        let proxy = try ProxyHarness(routes: routes())
        defer { proxy.finish(); try? FileManager.default.removeItem(at: directory) }
        let refused = try proxy.get("/openapi/json")
        #expect(refused.status == 502)
        let detail = try #require(proxy.json(refused)?["detail"] as? String)
        #expect(detail.contains("/b: maxLength (file://\(directory.path)/stub.yaml#/components/schemas/Numbers/properties/b/maxLength)"), "\(detail)")
        // The same path with another body: null items are allowed (nullable).
        #expect(try proxy.get("/openapi/json?body=%7B%22a%22%3A%5Bnull%5D%2C%22b%22%3A%22ok%22%7D").status == 200)
        // A templated path, under `default`: v = 1 is not above the exclusive minimum.
        let key = "openapi-\(UUID().uuidString.prefix(8))"
        let cached = try proxy.get("/openapi/cached/\(key)?cc=")
        #expect(cached.status == 502 && (proxy.json(cached)?["detail"] as? String)?.contains("/v: exclusiveMinimum") == true, "\(cached.text)")
        // A path the document does not describe is not checked.
        #expect(try proxy.get("/openapi/echo").status == 200)
    }

    @Test func aBadContractIsAConfigErrorAtItsLine() throws {
        let bad = directory.appendingPathComponent("bad.json")
        try #"{"properties": {"a": {"minimun": 1}}}"#.write(to: bad, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: directory) }
        let unknown = try checkRoute("contract", "{ schema: \(bad.path) }")
        #expect(unknown.status != 0)
        #expect(unknown.stderrText.contains(":5:") && unknown.stderrText.contains("\(bad.path)#/properties/a/minimun: is not a supported keyword"), "\(unknown.stderrText)")
        let missing = try checkRoute("contract", "{ schema: \(directory.path)/none.json, mode: enforce }")
        #expect(missing.status != 0 && missing.stderrText.contains("none.json: No such file or directory"), "\(missing.stderrText)")
        let both = try checkRoute("contract", "{ schema: \(bad.path), openapi: \(bad.path) }")
        #expect(both.status != 0 && both.stderrText.contains("expected schema or openapi, not both"), "\(both.stderrText)")
        try #"{"swagger": "2.0", "paths": {}}"#.write(to: directory.appendingPathComponent("v2.json"), atomically: true, encoding: .utf8)
        let swagger = try checkRoute("contract", "{ openapi: \(directory.path)/v2.json }")
        #expect(swagger.status != 0 && swagger.stderrText.contains("expected an OpenAPI 3.0 or 3.1 document"), "\(swagger.stderrText)")
        let mode = try checkRoute("contract", "{ schema: \(bad.path), mode: strict }")
        #expect(mode.status != 0 && mode.stderrText.contains("expected report or enforce, found 'strict'"), "\(mode.stderrText)")
    }
}
