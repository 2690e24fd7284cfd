import Foundation
import TestSupport
import Testing

/// Failure evidence (DESIGN §6): a response the route's serializer refused is kept as the
/// upstream sent it, `/-/failures` serves it, and its command reproduces the failure
/// offline on the saved body.
@Suite struct FailureEvidenceTests {
    static let broken = #"{"a": [1, 2,, 3], "b": null}"#

    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test func aRefusedResponseIsKeptAndItsCommandReproducesTheProblem() throws {
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api", extra: "    response: { remove_null_values: true, acceptable_status_codes: [200-299, 404] }\n"))
        defer { proxy.finish() }
        // A client's id may hold characters a path or a file name cannot.
        let id = "evidence/1'quoted'"
        let failed = try proxy.get("/api/json?status=404&body=" + Self.query(Self.broken), headers: [("X-Request-Id", id)])
        #expect(failed.status == 502)
        let type = proxy.json(failed)?["type"] as? String
        #expect(type == "urn:serializerd:serialization-failed")

        let list = proxy.json(try proxy.get("/-/failures"))
        let entries = list?["failures"] as? [[String: Any]] ?? []
        #expect(list?["keep_failures"] as? Bool == true && entries.count == 1)
        #expect(entries.first?["request_id"] as? String == id && entries.first?["type"] as? String == type)
        let href = try #require(entries.first?["href"] as? String)
        #expect(href == "/-/failures/evidence%2F1%27quoted%27")

        let one = try #require(proxy.json(try proxy.get(href)))
        let upstream = one["upstream"] as? [String: Any]
        #expect(upstream?["status"] as? Int == 404 && upstream?["content_type"] as? String == "application/json")
        #expect(Data(base64Encoded: upstream?["body_base64"] as? String ?? "") == Data(Self.broken.utf8))
        #expect((upstream?["headers"] as? [[String]])?.contains(["ETag", "\"v1\""]) == true)
        #expect((one["problem"] as? [String: Any])?["type"] as? String == type)
        let reproduce = try #require(one["reproduce"] as? [String: Any])
        let argv = try #require(reproduce["argv"] as? [String])
        #expect(Array(argv.prefix(8)) == ["serializerd", "transcode", "--serializer", "json", "--content-type", "application/json", "--status", "404"])
        #expect(argv.contains("acceptable_status_codes=200-299,404") && argv.contains("remove_null_values=true"))
        #expect(reproduce["body_file"] as? String == "failure-evidence_1_quoted_.body" && argv.last == "failure-evidence_1_quoted_.body")
        #expect((reproduce["command"] as? String)?.hasPrefix("serializerd transcode --serializer json") == true)

        let raw = try proxy.get(try #require(reproduce["body_path"] as? String))
        #expect(raw.status == 200 && raw.body == Array(Self.broken.utf8))
        #expect(raw.header("Content-Type") == "application/octet-stream" && raw.header("X-Content-Type-Options") == "nosniff")

        // The command, run on the saved body, ends in the same problem type.
        let offline = try reproduceOffline(argv, body: raw.body)
        #expect(offline.status == 1 && offline.problem?["type"] as? String == type)

        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_failure_evidence"] == 1)
        #expect((metrics["serializerd_failure_evidence_bytes"] ?? 0) > Double(Self.broken.utf8.count))

        let missing = try proxy.get("/-/failures/no-such-id")
        #expect(missing.status == 404 && proxy.json(missing)?["type"] as? String == "urn:serializerd:no-such-failure")
        #expect(try proxy.get("/-/failures/no-such-id/body").status == 404)
        #expect(try proxy.get("/-/failures", method: "POST").status == 405)
    }
}

/// Runs a failure's reproduce command (`serializerd transcode …`, its last argument the
/// body's file name) on `body` saved under that name; returns the exit status and the
/// problem document it printed.
func reproduceOffline(_ argv: [String], body: [UInt8]) throws -> (status: Int32, problem: [String: Any]?) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reproduce-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let saved = directory.appendingPathComponent(argv.last ?? "body").path
    try Data(body).write(to: URL(fileURLWithPath: saved))
    let result = try ServerBinary.run(Array(argv.dropFirst().dropLast()) + [saved])
    return (result.status, try? JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
}
