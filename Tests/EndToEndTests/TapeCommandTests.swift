import Foundation
import TestSupport
import Testing

/// `serializerd tape import | verify | redact` (DESIGN §7).
@Suite(.timeLimit(.minutes(5)))
struct TapeCommandTests {
    static let secret = "CLI-S3CR3T"

    /// A HAR as a browser saves it: HTTP/2 pseudo-headers, the type in content.mimeType, a
    /// key in the query and a token in a header.
    static let browserHAR = """
        {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],"entries":[
        {"startedDateTime":"2026-01-01T10:00:00.000Z","time":20,
         "request":{"method":"GET","url":"https://api.example.test/v1/items?page=2&api_key=\(secret)","httpVersion":"http/2.0",
           "headers":[{"name":":authority","value":"api.example.test"},{"name":"authorization","value":"Bearer \(secret)"}],
           "queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
         "response":{"status":200,"statusText":"","httpVersion":"http/2.0","headers":[],"cookies":[],
           "content":{"size":26,"mimeType":"application/json","text":"{\\"items\\":[1,2],\\"next\\":null}"},
           "redirectURL":"","headersSize":-1,"bodySize":-1},
         "cache":{},"timings":{"send":0,"wait":20,"receive":0}},
        {"startedDateTime":"2026-01-01T10:00:01.000Z","time":5,
         "request":{"method":"GET","url":"https://api.example.test/v1/page","httpVersion":"http/2.0","headers":[],
           "queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
         "response":{"status":200,"statusText":"","httpVersion":"http/2.0","headers":[{"name":"content-type","value":"text/html"}],
           "cookies":[],"content":{"size":13,"mimeType":"text/html","text":"<html></html>"},"redirectURL":"","headersSize":-1,"bodySize":-1},
         "cache":{},"timings":{"send":0,"wait":5,"receive":0}}]}}
        """

    static func workspace() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapecli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try browserHAR.write(toFile: path + "/saved.har", atomically: true, encoding: .utf8)
        return path
    }

    /// A workspace with a tapes directory and the `api` config written; its directory and
    /// the config's path.
    static func apiWorkspace() throws -> (String, String) {
        let dir = try workspace()
        try FileManager.default.createDirectory(atPath: dir + "/tapes", withIntermediateDirectories: false)
        let config = dir + "/serializerd.yaml"
        try Self.config(dir).write(toFile: config, atomically: true, encoding: .utf8)
        return (dir, config)
    }

    static func config(_ dir: String, response: String = "") -> String {
        """
        listen: 127.0.0.1:0
        tapes: { dir: \(dir)/tapes }
        routes:
          - name: api
            match: { prefix: /api/ }
            upstream: http://127.0.0.1:9/v1/
            tape: { mode: replay }
        \(response)
        """
    }

    /// A config with one replaying route, `app`, whose serializers take the Chromium HAR's
    /// answers (JSON, XML, a PNG); its path.
    static func appConfig(_ dir: String, tapes: String) throws -> String {
        let config = dir + "/serializerd.yaml"
        try """
            listen: 127.0.0.1:0
            tapes: { dir: \(tapes) }
            routes:
              - name: app
                match: { prefix: /app/ }
                upstream: http://127.0.0.1:9/api/
                tape: { mode: replay }
                response: { serializer: compound, serializers: [json, xml, image] }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return config
    }

    /// `tape verify` checks each replayed answer against the route's contract too, and
    /// lists a violation whatever the contract's mode (DESIGN §10).
    @Test func verifyListsContractViolationsInEitherMode() throws {
        let (dir, config) = try Self.apiWorkspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try ServerBinary.run(["tape", "import", dir + "/saved.har", "--route", "api", "--config", config]).status == 0)
        // The items answer has "next": null; this contract wants a string there.
        try #"{"properties": {"next": {"type": "string"}}}"#.write(toFile: dir + "/items.json", atomically: true, encoding: .utf8)
        for mode in ["report", "enforce"] {
            try Self.config(dir, response: "    response: { serializer: compound, serializers: [json, text] }\n"
                            + "    contract: { schema: items.json, mode: \(mode) }")
                .write(toFile: config, atomically: true, encoding: .utf8)
            let verify = try ServerBinary.run(["tape", "verify", "--config", config])
            #expect(verify.status == 1, "\(verify.stdoutText)\(verify.stderrText)")
            #expect(verify.stdoutText.contains("api: 2 entries, 1 pass, 1 would fail"), "\(verify.stdoutText)")
            #expect(verify.stdoutText.contains("entry 0: GET /v1/items?page=2&api_key=[redacted] (200) → contract-violation: 1 violation of items.json: /next: type"),
                    "\(verify.stdoutText)")
        }
        // A contract the answers meet: both pass.
        try #"{"properties": {"items": {"type": "array"}}}"#.write(toFile: dir + "/items.json", atomically: true, encoding: .utf8)
        let passing = try ServerBinary.run(["tape", "verify", "--config", config])
        #expect(passing.status == 0 && passing.stdoutText.contains("2 pass, 0 would fail"), "\(passing.stdoutText)")
    }

    @Test func importRedactsThenTheDaemonReplaysAndVerifyNamesWhatWouldFail() throws {
        let (dir, config) = try Self.apiWorkspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let imported = try ServerBinary.run(["tape", "import", dir + "/saved.har", "--route", "api", "--config", config])
        #expect(imported.status == 0, "\(imported.stderrText)")
        #expect(imported.stdoutText.contains("imported 2 entries into \(dir)/tapes/api.har"))
        let tape = try String(contentsOfFile: dir + "/tapes/api.har", encoding: .utf8)
        #expect(!tape.contains(Self.secret) && tape.contains("api_key=[redacted]"))

        // The daemon replays the imported answer (the key matched by name only).
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--config", config])
        let replayed = try RawHTTP.request(port: port, target: "/api/items?api_key=whatever&page=2")
        #expect(daemon.stop() == 0)
        #expect(replayed.status == 200 && replayed.text == #"{"items":[1,2],"next":null}"#)
        #expect(replayed.header("Serializerd-Source") == "tape")

        // The JSON route cannot read the HTML entry: verify says so and exits 1.
        let verify = try ServerBinary.run(["tape", "verify", "--config", config])
        #expect(verify.status == 1)
        #expect(verify.stdoutText.contains("api: 2 entries, 1 pass, 1 would fail"))
        #expect(verify.stdoutText.contains("entry 1: GET /v1/page (200) → unacceptable-content-type"))
        // Today's config accepting HTML as text: every entry passes.
        try Self.config(dir, response: "    response: { serializer: compound, serializers: [json, text] }")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let passing = try ServerBinary.run(["tape", "verify", "--config", config, "--route", "api"])
        #expect(passing.status == 0, "\(passing.stdoutText)\(passing.stderrText)")
        #expect(passing.stdoutText.contains("2 pass, 0 would fail"))
        // Errors are clear: an unknown route, a file that is not HAR.
        let unknown = try ServerBinary.run(["tape", "import", dir + "/saved.har", "--route", "nope", "--config", config])
        #expect(unknown.status == 1 && unknown.stderrText.contains("no route named 'nope'"))
        let notHAR = try ServerBinary.run(["tape", "import", config, "--route", "api", "--config", config])
        #expect(notHAR.status == 1 && notHAR.stderrText.contains("not JSON"))
    }

    /// A HAR taken from headless Chromium's own DevTools protocol (scripts/chromium-har.py:
    /// a page fetching JSON with a query, an XML feed, a JSON POST and a PNG) imports, and
    /// the daemon answers each request from it through the route's serializers.
    @Test func aHARFromChromiumImportsAndReplays() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/tapes", withIntermediateDirectories: false)
        let config = try Self.appConfig(dir, tapes: dir + "/tapes")
        let imported = try ServerBinary.run(["tape", "import", Fixture.path("chromium-devtools.har"), "--route", "app", "--config", config])
        #expect(imported.status == 0, "\(imported.stderrText)")
        #expect(imported.stdoutText.contains("imported 4 entries"))
        let verify = try ServerBinary.run(["tape", "verify", "--config", config])
        #expect(verify.status == 0 && verify.stdoutText.contains("app: 4 entries, 4 pass, 0 would fail"), "\(verify.stdoutText)")

        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--config", config])
        defer { _ = daemon.stop() }
        let items = try RawHTTP.request(port: port, target: "/app/items.json?sort=name&page=2")
        #expect(items.status == 200 && items.header("Serializerd-Source") == "tape")
        #expect(items.text == #"{"page":2,"items":[{"id":1,"name":"café","price":2.5},{"id":2,"name":"tea","price":null}]}"#, "\(items.text)")
        let feed = try RawHTTP.request(port: port, target: "/app/feed.xml")
        #expect(feed.status == 200 && feed.text.contains("first") && feed.text.contains("second"), "\(feed.text)")
        let order = try RawHTTP.request(port: port, method: "POST", target: "/app/orders", headers: [("Content-Type", "application/json")],
                                        body: Array(#"{"item":7}"#.utf8))
        #expect(order.status == 201 && order.text.contains(#""created":true"#), "\(order.text)")
        let pixel = try RawHTTP.request(port: port, target: "/app/pixel.png")
        #expect(pixel.status == 200 && pixel.text.contains(#""width":1"#), "\(pixel.text)")
        let miss = try RawHTTP.request(port: port, target: "/app/items.json?page=3&sort=name")
        #expect(miss.status == 502 && miss.text.contains("replay-miss"))
    }

    /// The same HAR with a request Chromium cancelled (status 0, `_error: net::ERR_ABORTED`):
    /// that entry is skipped and counted, never a reason to refuse the file — by `tape
    /// import` into a tapes.dir that does not exist yet, and by the daemon reading it.
    @Test func aCancelledEntryIsSkippedAndCountedAndImportMakesTheDirectory() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try Self.appConfig(dir, tapes: dir + "/missing/tapes")
        let imported = try ServerBinary.run(["tape", "import", Fixture.path("chromium-cancelled.har"), "--route", "app", "--config", config])
        #expect(imported.status == 0, "\(imported.stderrText)")
        #expect(imported.stdoutText.contains("imported 4 entries") && imported.stdoutText.contains("1 skipped"), "\(imported.stdoutText)")
        let made = try FileManager.default.attributesOfItem(atPath: dir + "/missing/tapes")
        #expect((made[.posixPermissions] as? Int) == 0o700)
        #expect(FileManager.default.fileExists(atPath: dir + "/missing/tapes/app.har"))

        // The browser's file as the tape itself: read, the cancelled entry passed over.
        try FileManager.default.removeItem(atPath: dir + "/missing/tapes/app.har")
        try FileManager.default.copyItem(atPath: Fixture.path("chromium-cancelled.har"), toPath: dir + "/missing/tapes/app.har")
        let (daemon, port) = try DaemonUnderTest.start(arguments: ["serve", "--config", config])
        defer { _ = daemon.stop() }
        #expect(daemon.waitForLine({ $0.contains("tape_entries_skipped") && $0.contains(#""skipped":1"#) }) != nil, "\(daemon.text)")
        let items = try RawHTTP.request(port: port, target: "/app/items.json?sort=name&page=2")
        #expect(items.status == 200 && items.header("Serializerd-Source") == "tape")
        let cancelled = try RawHTTP.request(port: port, target: "/app/slow.json")
        #expect(cancelled.status == 502 && cancelled.text.contains("replay-miss"))
    }

    /// Reading a tape holds at most twice the file plus 64 MiB (DESIGN §2): a 32 MiB HAR
    /// shaped like a browser's through `tape import`, `tape verify` and a daemon loading it,
    /// each one's peak RSS measured by bench/har_memory.py (which BENCHMARKS.md runs at
    /// 256 MiB). The reader that parsed the whole file into a tree peaked at 4.8 × the file.
    @Test func readingATapeHoldsAtMostTwiceTheFilePlus64MiB() throws {
        let script = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("bench/har_memory.py").path
        let run = try ServerBinary.run(["-u", script, "--binary", ServerBinary.url.path, "--size", "32"], timeout: 170,
                                       executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(run.status == 0, "\(run.stdoutText)\(run.stderrText)")
        #expect(run.stdoutText.components(separatedBy: "within").count == 4, "\(run.stdoutText)")
    }

    @Test func redactRewritesATapeWithoutItsSecrets() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/serializerd.yaml"
        try "listen: 127.0.0.1:0\nroutes: []\n".write(toFile: config, atomically: true, encoding: .utf8)
        let redact = try ServerBinary.run(["tape", "redact", dir + "/saved.har", "--config", config])
        #expect(redact.status == 0, "\(redact.stderrText)")
        let text = try String(contentsOfFile: dir + "/saved.har", encoding: .utf8)
        #expect(!text.contains(Self.secret) && text.contains("\"[redacted]\""))
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/saved.har")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
