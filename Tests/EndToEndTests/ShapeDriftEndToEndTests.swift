import Foundation
import TestSupport
import Testing

/// DESIGN §10 shape drift through the daemon: learned from answers, planted changes found
/// by chaos, each reported once (event, log, metric, `/-/drift`), kept across reloads;
/// and `contract learn` from a tape.
@Suite(.timeLimit(.minutes(5)))
struct ShapeDriftEndToEndTests {
    /// An answer whose values vary with `n` and whose shape does not.
    static func answer(_ n: Int) -> String {
        let tags = (0...(n % 3)).map { "\"t\($0)-\(n)\"" }.joined(separator: ",")
        return #"{"user":{"id":\#(n),"email":"u\#(n)@example.com","tags":[\#(tags)]},"n":\#(n % 7),"price":\#(n % 2 == 0 ? "\(n)" : "\(n).5"),"when":"2026-11-\#(10 + n % 18)T08:00:00Z"}"#
    }

    static func target(_ endpoint: String, _ n: Int) -> String {
        "/drift/\(endpoint)/\(n)/json?body=" + answer(n).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    static let driftRoute = route("drift", prefix: "/drift/", extra: "    contract: { drift: true, drift_after: 5 }\n    network: { header_control: true }\n")

    /// The planted changes, each endpoint all five: (chaos, kind, pointer).
    static let planted = [("drop=/user/email", "missing_member", "/user/email"), ("null=/n", "null", "/n"),
                          ("string=/user/id", "type", "/user/id"), ("singleton=/user/tags", "type", "/user/tags"),
                          ("html_200", "refused", "")]

    static func changes(_ proxy: ProxyHarness) throws -> [[String: Any]] {
        let routes = proxy.json(try proxy.get("/-/drift"))?["routes"] as? [[String: Any]] ?? []
        return routes.first { $0["route"] as? String == "drift" }?["changes"] as? [[String: Any]] ?? []
    }

    @Test func twentyPlantedChangesAreEachReportedOnceAndVaryingValuesNever() throws {
        let proxy = try ProxyHarness(routes: Self.driftRoute)
        defer { proxy.finish() }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        let endpoints = ["a", "b", "c", "d"]
        var n = 0
        // Five answers each teach the shape; values vary, ids read as {id}.
        for endpoint in endpoints {
            for _ in 0..<5 {
                n += 1
                #expect(try proxy.get(Self.target(endpoint, n)).status == 200)
            }
        }
        for endpoint in endpoints {
            for (chaos, _, _) in Self.planted {
                n += 1
                // Planted twice: the second is the same change, not reported again.
                for _ in 0..<2 {
                    let reply = try proxy.get(Self.target(endpoint, n), headers: [("Serializerd-Chaos", chaos)])
                    #expect(reply.header("Serializerd-Fault-Applied") == chaos, "\(chaos): \(reply.status) \(reply.text)")
                }
            }
        }
        // Varying values afterwards report nothing more.
        for k in 0..<200 {
            n += 1
            #expect(try proxy.get(Self.target(endpoints[k % 4], n)).status == 200)
        }
        let changes = try Self.changes(proxy)
        var found = Set(changes.map { "\($0["endpoint"] ?? "") \($0["kind"] ?? "") \($0["pointer"] ?? "")" })
        #expect(changes.count == 20 && found.count == 20, "\(changes)")
        for endpoint in endpoints {
            for (_, kind, pointer) in Self.planted { #expect(found.remove("GET /\(endpoint)/{id}/json \(kind) \(pointer)") != nil, "\(endpoint) \(kind) \(pointer)") }
        }
        #expect(changes.allSatisfy { $0["status"] as? Int == 200 && $0["at"] is String })
        let singleton = changes.first { $0["pointer"] as? String == "/user/tags" }
        #expect(singleton?["was"] as? String == "array" && singleton?["now"] as? String == "string")
        // The metric by kind, the event stream and the log: 20 each.
        let metrics = Metrics(try proxy.get("/metrics").text)
        let byKind = ["missing_member": 4, "null": 4, "type": 8, "refused": 4, "new_member": 0]
        for (kind, count) in byKind { #expect(metrics["serializerd_shape_drift_total{route=\"drift\",kind=\"\(kind)\"}"] == Double(count), "\(kind)") }
        let events = stream.read(untilAll: ["\"endpoint\":\"GET /d/{id}/json\",\"status\":200,\"kind\":\"refused\""])
        #expect(events.components(separatedBy: "event: shape_drift\n").count - 1 == 20, "\(events)")
        #expect(proxy.daemon.waitForText { _ in proxy.daemon.lines().filter { $0.contains("\"msg\":\"shape_drift\"") }.count == 20 })
    }

    @Test func whatWasLearnedSurvivesAReloadAndIsAnOpenAPIDocument() throws {
        let proxy = try ProxyHarness(routes: Self.driftRoute)
        defer { proxy.finish() }
        for n in 1...5 { #expect(try proxy.get(Self.target("a", n)).status == 200) }
        #expect(try proxy.get(Self.target("a", 6), headers: [("Serializerd-Chaos", "string=/user/id")]).status == 200)
        #expect(try Self.changes(proxy).count == 1)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        // The same change is not news; a new member is, at once: the shape was kept.
        #expect(try proxy.get(Self.target("a", 7), headers: [("Serializerd-Chaos", "string=/user/id")]).status == 200)
        let extra = "/drift/a/8/json?body=" + Self.answer(8).replacingOccurrences(of: #""n":1"#, with: #""n":1,"extra":[]"#)
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try proxy.get(extra).status == 200)
        let changes = try Self.changes(proxy)
        #expect(changes.count == 2 && changes.last?["kind"] as? String == "new_member" && changes.last?["pointer"] as? String == "/extra", "\(changes)")
        // The learned document: the endpoint's template, `required`, a format, the new type.
        let document = try proxy.get("/-/drift/drift")
        #expect(document.status == 200)
        let text = document.text
        #expect(text.contains(#""openapi":"3.1.0""#) && text.contains(#""/a/{id}/json":{"get":{"parameters":[{"name":"id","in":"path""#), "\(text)")
        #expect(text.contains(#""id":{"type":["string","integer"]}"#) && text.contains(#""when":{"type":"string","format":"date-time"}"#), "\(text)")
        #expect(text.contains(#""required":["user","n","price","when"]"#), "\(text)")
        #expect(try proxy.get("/-/drift/nope").status == 404)
        // /-/routes says what the route checks and learns.
        let routes = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]] ?? []
        let contract = routes.first?["contract"] as? [String: Any]
        #expect(contract?["drift_after"] as? Int == 5 && contract?["mode"] is NSNull && contract?["file"] is NSNull, "\(routes)")
    }

    @Test func aTapeLearnsADocumentTheSameTapeThenPasses() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("learn-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recorder = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    tape: { mode: record }\n"), top: "tapes: { dir: \(dir) }\n")
        for n in 1...12 { #expect(try recorder.get("/api/orders/\(n)/json?body=" + Self.answer(n).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!).status == 200) }
        #expect(try recorder.get("/api/json").status == 200)
        #expect(TapeTests.waitForEntries(dir + "/api.har", 13))
        #expect(recorder.finish() == 0)
        let config = dir + "/serializerd.yaml"
        let yaml = "listen: 127.0.0.1:0\ntapes: { dir: \(dir) }\nroutes:\n  - name: api\n    match: { prefix: /api/ }\n    upstream: http://127.0.0.1:9/v1\n    tape: { mode: replay }\n"
        try yaml.write(toFile: config, atomically: true, encoding: .utf8)
        let learned = try ServerBinary.run(["contract", "learn", "--route", "api", "--config", config])
        #expect(learned.status == 0, "\(learned.stderrText)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(learned.stdoutText.utf8)) as? [String: Any])
        let paths = document["paths"] as? [String: Any] ?? [:]
        #expect(Set(paths.keys) == ["/orders/{id}/json", "/json"], "\(paths.keys)")
        try learned.stdoutText.write(toFile: dir + "/learned.json", atomically: true, encoding: .utf8)
        try (yaml + "    contract: { openapi: learned.json, mode: enforce }\n").write(toFile: config, atomically: true, encoding: .utf8)
        let verify = try ServerBinary.run(["tape", "verify", "--config", config])
        #expect(verify.status == 0 && verify.stdoutText.contains("api: 13 entries, 13 pass, 0 would fail"), "\(verify.stdoutText)\(verify.stderrText)")
        // The document asserts what the answers always had: an answer without it fails.
        let strict = learned.stdoutText.replacingOccurrences(of: #""required": ["#, with: #""required": ["absent", "#)
        try strict.write(toFile: dir + "/learned.json", atomically: true, encoding: .utf8)
        let failing = try ServerBinary.run(["tape", "verify", "--config", config])
        #expect(failing.status == 1 && failing.stdoutText.contains("required"), "\(failing.stdoutText)")
        // Mistakes are named.
        let unknown = try ServerBinary.run(["contract", "learn", "--route", "nope", "--config", config])
        #expect(unknown.status == 1 && unknown.stderrText.contains("no route named 'nope'"))
    }

    @Test func driftSettingsAreCheckedAtLoad() throws {
        let cases = [("{ drift: maybe }", "expected true or false"), ("{ drift_after: 5 }", "drift_after needs drift: true"),
                     ("{ drift: true, drift_after: 0 }", "1"), ("{ drift: true, mode: enforce }", "mode needs a schema")]
        for (setting, message) in cases {
            let run = try checkRoute("contract", setting)
            #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains(message), "\(setting): \(run.stderrText)")
        }
    }
}
