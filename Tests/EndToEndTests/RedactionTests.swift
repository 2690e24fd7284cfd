import Foundation
import TestSupport
import Testing

/// `capture:` (DESIGN §6): a secret in the upstream URL, a cookie the upstream sets and
/// members of JSON and form bodies never reach the log or any admin answer, while the
/// client and the upstream see exactly what they would without redaction.
@Suite(.timeLimit(.minutes(5)))
struct RedactionTests {
    static let secret = "S3CR3T-7f1c"

    /// Every admin answer and the daemon's log, as one text.
    static func everythingKept(_ proxy: ProxyHarness) throws -> String {
        var text = proxy.daemon.text
        for path in ["/-/failures", "/-/recent", "/-/recent?format=har", "/-/routes", "/metrics"] {
            text += try proxy.get(path).text
        }
        for failure in (proxy.json(try proxy.get("/-/failures"))?["failures"] as? [[String: Any]]) ?? [] {
            let href = failure["href"] as? String ?? ""
            text += try proxy.get(href).text
            text += try proxy.get(href + "/body").text
        }
        return text
    }

    static func file(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("redact-\(UUID().uuidString)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func secretsNeverReachTheLogOrAdminButReachTheClientUnchanged() throws {
        let s = Self.secret
        let json = try Self.file(#"{"password":"\#(s)","user":{"token":"\#(s)","name":"kept"},"list":[{"pin":"\#(s)"},{"pin":"\#(s)"}]}"#)
        let truncated = try Self.file(#"{"ok":1,"password":"\#(s)","more":[1,2"#)
        let form = try Self.file("a=1&password=\(s)&user%5Btoken%5D=\(s)&b=2")
        defer { for path in [json, truncated, form] { try? FileManager.default.removeItem(atPath: path) } }
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: """
            capture:
              redact_json: [/password, /user/token, "/list/*/pin"]
              # the header that makes the stub set a cookie carries the secret too
              redact_headers: [Authorization, Cookie, Set-Cookie, X-Echo-Set-Cookie]

            """)
        defer { proxy.finish() }
        let requests = [
            // An unacceptable status with a JSON body the serializer still parsed.
            "/api/file?path=\(json)&type=application/json&status=500&api_key=\(s)&x=1",
            // JSON cut short: a serialization failure, the body malformed.
            "/api/file?path=\(truncated)&type=application/json&TOKEN=\(s)",
            // A form body where JSON was expected.
            "/api/file?path=\(form)&type=application/x-www-form-urlencoded&Sig=\(s)",
        ]
        for target in requests {
            let reply = try proxy.get(target, headers: [("Authorization", "Bearer \(s)"), ("Cookie", "c=\(s)"),
                                                       ("X-Echo-Set-Cookie", "sid=\(s); HttpOnly")])
            #expect(reply.status >= 500, "\(target)")
            // The client's own problem document: the URL's secret is redacted there too.
            let problem = proxy.json(reply)
            let url = (problem?["upstream"] as? [String: Any])?["url"] as? String ?? ""
            #expect(!url.contains(s) && url.contains("=[redacted]"), "\(url)")
        }
        // The client still gets the upstream's body as the serializer read it.
        #expect(try proxy.get(requests[0]).text.contains(s))
        // Wait until the last completions are in the recent ring.
        let deadline = Date().addingTimeInterval(10)
        while (proxy.json(try proxy.get("/-/recent"))?["events"] as? [Any])?.count ?? 0 < 4 && Date() < deadline { usleep(20_000) }
        let kept = try Self.everythingKept(proxy)
        #expect(!kept.contains(s), "a secret was kept: \(kept.components(separatedBy: s).first!.suffix(300))")
        // What is kept is still useful: the shape, the other members, the marker.
        let failures = (proxy.json(try proxy.get("/-/failures"))?["failures"] as? [[String: Any]]) ?? []
        #expect(failures.count == 4)
        let bodies = try failures.map { try proxy.get(($0["href"] as? String ?? "") + "/body").text }
        #expect(bodies.contains(#"{"password":"[redacted]","user":{"token":"[redacted]","name":"kept"},"list":[{"pin":"[redacted]"},{"pin":"[redacted]"}]}"#),
                "\(bodies)")
        #expect(bodies.contains(#"{"ok":1,"password":"[redacted]","more":[1,2"#), "\(bodies)")
        #expect(bodies.contains("a=1&password=[redacted]&user%5Btoken%5D=[redacted]&b=2"), "\(bodies)")
        let first = try proxy.get((failures.last?["href"] as? String ?? ""))
        let upstream = proxy.json(first)?["upstream"] as? [String: Any]
        #expect((upstream?["url"] as? String)?.contains("api_key=[redacted]&x=1") == true, "\(first.text)")
        let headers = upstream?["headers"] as? [[String]] ?? []
        #expect(headers.contains(["Set-Cookie", "[redacted]"]), "\(headers)")
        #expect(headers.contains { $0.first == "Content-Type" && $0.last == "application/json" })
    }

    @Test func aConfigErrorNeverEchoesCredentials() throws {
        let path = try Self.file("routes:\n  - name: keyed\n    match: { prefix: /k/ }\n"
                                 + "    upstream: http://user:\(Self.secret)@127.0.0.1:9/v1?api_key=\(Self.secret)\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try ServerBinary.run(["check", path])
        #expect(result.status == 1 && result.stderrText.contains("user:[redacted]@127.0.0.1:9/v1?api_key=[redacted]"), "\(result.stderrText)")
        #expect(!result.stderrText.contains(Self.secret))
    }

    @Test func captureSettingsAreCheckedAtLoad() throws {
        let base = "routes:\n  - name: a\n    match: { prefix: /a/ }\n    upstream: http://127.0.0.1:9/\n"
        for (capture, message) in [
            ("capture: { redact_json: [password] }\n", "capture.redact_json[0]: expected a JSON pointer"),
            ("capture: { redact_json: [\"/a~2\"] }\n", "capture.redact_json[0]: expected a JSON pointer"),
            ("capture: { redact_headers: [\"Bad Name\"] }\n", "capture.redact_headers[0]: expected a header name"),
            ("capture: { redact_query: [\"\"] }\n", "capture.redact_query[0]: expected a query parameter name"),
            ("capture: { redact_cookies: [a] }\n", "capture.redact_cookies: unknown key"),
        ] {
            let path = try Self.file(capture + base)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try ServerBinary.run(["check", path])
            #expect(result.status == 1 && result.stderrText.contains(message), "\(capture): \(result.stderrText)")
        }
    }
}
