import Foundation
import TestSupport
import Testing

/// `output.numbers` (DESIGN §5) end to end: numbers at the edges of what a double holds,
/// in JSON, XML and binary plists, under each setting, against Python's Decimal as oracle.
@Suite(.timeLimit(.minutes(5)))
struct NumberGuardTests {
    static let routes = ["keep", "count", "string", "reject"].map { mode in
        route(mode, prefix: "/\(mode)/", extra: "    output: { numbers: \(mode) }\n")
            + route("p" + mode, prefix: "/p\(mode)/", extra: "    response: { serializer: plist }\n    output: { numbers: \(mode) }\n")
    }.joined()

    @Test func everySettingAgreesWithAnIndependentOracle() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let run = try ServerBinary.run([Fixture.path("numbers_oracle.py"), String(proxy.port)], timeout: 120,
                                       executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(run.status == 0, "\(run.stderrText)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], "\(run.stdoutText)")
        #expect(summary["count"] as? Int == 200)
        #expect((summary["checked"] as? Int ?? 0) >= 400)
        let mismatches = summary["mismatches"] as? [String] ?? ["none listed"]
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20))")
        let unsafe = summary["unsafe"] as? Int ?? 0
        #expect(unsafe > 50 && unsafe < 150, "\(unsafe)")
        // The count reaches the metrics and the completion events: once per count request.
        let deadline = Date().addingTimeInterval(10)
        var counted: Double?
        repeat {
            counted = Metrics(try proxy.get("/metrics").text)["serializerd_unsafe_numbers_total{route=\"count\"}"]
            if counted == Double(unsafe) { break }
            usleep(20_000)
        } while Date() < deadline
        #expect(counted == Double(unsafe))
        let events = completedLines(proxy.daemon.text)
        let countEvent = events.first { $0["route"] as? String == "count" }
        #expect(countEvent?["unsafe_numbers"] as? Int == unsafe)
        // keep does not look: nothing counted, the event's field null.
        let keepEvent = try #require(events.first { $0["route"] as? String == "keep" })
        #expect(keepEvent["unsafe_numbers"] is NSNull, "\(keepEvent)")
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_unsafe_numbers_total{route=\"keep\"}"] ?? 0 == 0)
    }

    @Test func keepOrCountBesideCanonicalIsAConfigError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("numbers-\(UUID().uuidString).yaml").path
        try """
            routes:
              - name: a
                match: { prefix: /a/ }
                upstream: http://127.0.0.1:9/
                output: { canonical: true, numbers: keep }
              - name: b
                match: { prefix: /b/ }
                upstream: http://127.0.0.1:9/
                output: { numbers: round }
              - name: c
                match: { prefix: /c/ }
                upstream: http://127.0.0.1:9/
                output: { canonical: true, numbers: count }

            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["check", path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains(":5:41: error: routes[0].output.numbers: keep cannot be combined with canonical: true"), "\(result.stderrText)")
        #expect(result.stderrText.contains("routes[1].output.numbers: expected keep, count, string or reject, found 'round'"), "\(result.stderrText)")
        #expect(result.stderrText.contains("routes[2].output.numbers: count cannot be combined with canonical: true"), "\(result.stderrText)")
    }
}
