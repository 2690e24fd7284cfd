import Foundation
import TestSupport
import Testing

/// Tapes (DESIGN §2 `tape:`): record what the upstream said, replay it with the upstream
/// gone, through the route's current serializer; secrets never reach the tape file.
@Suite(.timeLimit(.minutes(5)))
struct TapeTests {
    static let secret = "T4PE-S3CR3T"

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    /// A route on `upstream` whose tape is in `mode`; `nowhere` is a port nothing listens on.
    static func tapeRoute(_ mode: String, upstream: String = "{stub}", extra: String = "") -> String {
        "  - name: api\n    match: { prefix: /api/ }\n    upstream: \(upstream)\n    tape: { mode: \(mode) }\n" + extra
    }

    static let nowhere = "http://127.0.0.1:9/v1"

    struct Exchange: Equatable {
        let status: Int
        let body: String
        let type: String?
    }

    static func exchange(_ response: RawResponse) -> Exchange {
        Exchange(status: response.status, body: response.text, type: response.header("Content-Type"))
    }

    static let requests: [(String, String, [(String, String)], [UInt8])] = [
        ("GET", "/api/json?api_key=\(secret)&x=1", [("Authorization", "Bearer \(secret)")], []),
        ("GET", "/api/json?body=%7B%22a%22%3A1%2C%22n%22%3Anull%7D", [], []),
        ("POST", "/api/json?status=201", [("Content-Type", "application/json")], Array(#"{"password":"\#(secret)","q":1}"#.utf8)),
        ("GET", "/api/json?h=X-Trace:1", [], []),
    ]

    func send(_ proxy: ProxyHarness) throws -> [Exchange] {
        try Self.requests.map { method, target, headers, body in
            Self.exchange(try proxy.get(target, method: method, headers: headers, body: body))
        }
    }

    @Test func recordedExchangesReplayWithTheUpstreamGoneAndSecretsStayOut() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\ncapture: { redact_json: [/password] }\n"
        let recorder = try ProxyHarness(routes: Self.tapeRoute("record"), top: top)
        let live = try send(recorder)
        let dated = "/api/json?date=Mon,%2001%20Jan%202001%2000:00:00%20GMT"
        #expect(try recorder.get(dated).header("Date") == "Mon, 01 Jan 2001 00:00:00 GMT")
        #expect(live.map(\.status) == [200, 200, 201, 200])
        let source = try recorder.get("/api/json").header("Serializerd-Source")
        #expect(source == "upstream")
        // The writer thread writes the tape while the daemon runs; admin lists and serves it.
        #expect(Self.waitForEntries(dir + "/api.har", 6))
        let listed = recorder.json(try recorder.get("/-/tapes"))?["tapes"] as? [[String: Any]]
        #expect(listed?.first?["route"] as? String == "api" && listed?.first?["entries"] as? Int == 6)
        #expect(listed?.first?["mode"] as? String == "record")
        let served = try recorder.get("/-/tapes/api")
        #expect(served.status == 200 && !served.text.contains(Self.secret) && served.text.contains(#""version":"1.2""#))
        #expect(try recorder.get("/-/tapes/nope").status == 404)
        let scrape = try recorder.get("/metrics").text
        #expect(Metrics(scrape)["serializerd_tape_entries{route=\"api\"}"] == 6)
        try expectPromtoolAccepts(scrape)
        #expect(recorder.finish() == 0)

        let file = dir + "/api.har"
        let bytes = try #require(FileManager.default.contents(atPath: file))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!String(decoding: bytes, as: UTF8.self).contains(Self.secret))
        let har = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        let entries = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        #expect(entries.count == 6)
        #expect(((har["log"] as? [String: Any])?["version"] as? String) == "1.2")
        // An independent reader: the HAR 1.2 schema, checked by Python's jsonschema.
        let checked = try ServerBinary.run(["-c", "exec /usr/bin/python3 \"$0\" \"$1\"", Fixture.path("har_check.py"), file],
                                           executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(checked.status == 0, "\(checked.stdoutText)\(checked.stderrText)")
        #expect(checked.stdoutText.contains("6 entries checked"))

        // A replaying route without a tape starts empty, with a warning.
        let empty = try ProxyHarness(routes: Self.tapeRoute("replay", upstream: Self.nowhere), top: "tapes: { dir: \(dir)/none }\n")
        #expect(empty.daemon.waitForLine { $0.contains("\"msg\":\"tape_empty\"") && $0.contains("replay-miss") } != nil)
        #expect(try empty.get("/api/json").status == 502)
        empty.finish()
        // Replay: the upstream is nowhere, yet every recorded request gets the same answer.
        let player = try ProxyHarness(routes: Self.tapeRoute("replay", upstream: Self.nowhere), top: top)
        defer { player.finish() }
        #expect(try send(player) == live)
        #expect(try player.get("/api/json?h=X-Trace:1").header("Serializerd-Source") == "tape")
        // Today's Date, not the recording's.
        let replayedDate = try player.get(dated).header("Date")
        #expect(replayedDate != nil && replayedDate != "Mon, 01 Jan 2001 00:00:00 GMT")
        // A request never recorded: a replay-miss naming the nearest recording and what differs.
        let miss = try player.get("/api/json?x=2")
        #expect(miss.status == 502)
        let problem = player.json(miss)
        #expect((problem?["type"] as? String)?.hasSuffix("replay-miss") == true)
        let detail = problem?["detail"] as? String ?? ""
        #expect(detail.contains("nearest: GET /v1/json?") && detail.contains("query x"))
        #expect(miss.header("Serializerd-Source") == "upstream")
    }

    @Test func aReplayGoesThroughTodaysSerializerAndRepeatsPlayInOrder() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\n"
        let recorder = try ProxyHarness(routes: Self.tapeRoute("record"), top: top)
        let target = "/api/json?body=%7B%22a%22%3A1%2C%22n%22%3Anull%7D"
        #expect(try recorder.get(target).text == #"{"a":1,"n":null}"#)
        // The same request three times, three different upstream answers (the echo holds
        // each request's own id).
        let echoes = try (1...3).map { n in try recorder.get("/api/echo", headers: [("X-Request-Id", "seq-\(n)")]).text }
        #expect(Set(echoes).count == 3)
        recorder.finish()

        let changed = Self.tapeRoute("replay", upstream: Self.nowhere, extra: "    response: { remove_null_values: true }\n")
        let player = try ProxyHarness(routes: changed, top: top)
        defer { player.finish() }
        #expect(try player.get(target).text == #"{"a":1}"#)
        let replayed = try (1...4).map { n in try player.get("/api/echo", headers: [("X-Request-Id", "seq-\(n)")]).text }
        #expect(replayed == echoes + [echoes[2]])
    }

    @Test func replayOrForwardRecordsMissesAndATapeThatIsNotHARIsAConfigError() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\n"
        let proxy = try ProxyHarness(routes: Self.tapeRoute("replay_or_forward, record_misses: true"), top: top)
        let first = try proxy.get("/api/json?n=1")
        let second = try proxy.get("/api/json?n=1")
        #expect(first.header("Serializerd-Source") == "upstream")
        #expect(second.header("Serializerd-Source") == "tape")
        #expect(first.text == second.text)
        proxy.finish()

        let file = dir + "/api.har"
        try Data("not a tape".utf8).write(to: URL(fileURLWithPath: file))
        let config = try Self.config(top + "routes:\n" + Self.tapeRoute("replay", upstream: Self.nowhere))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let check = try ServerBinary.run(["check", "--config", config])
        #expect(check.status == 1)
        #expect(check.stderrText.contains("api.har") && check.stderrText.contains("not JSON"))
        // Nothing was replaced.
        #expect(FileManager.default.contents(atPath: file) == Data("not a tape".utf8))
        // A tape past 256 MiB (sparse: 2 GiB on paper) and a symlink are refused at once, unread.
        try FileManager.default.removeItem(atPath: file)
        let big = open(file, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(big, 2 << 30) == 0)
        close(big)
        let tooBig = try ServerBinary.run(["check", "--config", config])
        #expect(tooBig.status == 1 && tooBig.stderrText.contains("over the 268435456-byte limit"))
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: "/etc/hostname")
        let link = try ServerBinary.run(["check", "--config", config])
        #expect(link.status == 1 && link.stderrText.contains("is not a regular file"))
    }

    /// Polls the tape file until it holds `count` entries; false at the deadline.
    static func waitForEntries(_ file: String, _ count: Int, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: file),
               let har = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
               ((har["log"] as? [String: Any])?["entries"] as? [Any])?.count == count {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// Two workers recording one route at once: every exchange is on the tape once, whole.
    /// Then the directory goes away: recording stops with a logged error, forwarding goes on.
    @Test func concurrentRecordingLosesNothingAndAVanishedDirectoryStopsOnlyRecording() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let proxy = try ProxyHarness(routes: Self.tapeRoute("record"), top: "tapes: { dir: \(dir) }\n", workers: 2)
        defer { proxy.finish() }
        let port = proxy.port
        let statuses = Locked<[Int]>([])
        let threads = (0..<4).map { t in
            Thread {
                for n in 0..<15 {
                    let status = (try? RawHTTP.request(port: port, target: "/api/json?t=\(t)&n=\(n)").status) ?? 0
                    statuses.update { $0.append(status) }
                }
            }
        }
        threads.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(30)
        while statuses.current.count < 60 && Date() < deadline { usleep(10_000) }
        #expect(statuses.current.count == 60 && statuses.current.allSatisfy { $0 == 200 })
        let file = dir + "/api.har"
        #expect(Self.waitForEntries(file, 60))
        let har = try JSONSerialization.jsonObject(with: try #require(FileManager.default.contents(atPath: file))) as? [String: Any]
        let urls = (((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []).compactMap {
            ($0["request"] as? [String: Any])?["url"] as? String
        }
        #expect(Set(urls.map { $0.split(separator: "?").last.map(String.init) ?? "" }).count == 60)

        try FileManager.default.removeItem(atPath: dir)
        #expect(try proxy.get("/api/json?after=1").status == 200)
        #expect(proxy.daemon.waitForLine({ $0.contains("tape_write_failed") }) != nil)
        #expect(try proxy.get("/api/json?after=2").status == 200)
        let listed = proxy.json(try proxy.get("/-/tapes"))?["tapes"] as? [[String: Any]]
        #expect((listed?.first?["recording_stopped"] as? String)?.contains("No such file") == true)
    }

    /// A replayed answer's serialization is kept for the route that made it; a reload
    /// with another response setting serializes it afresh.
    @Test func aReloadedRouteNeverGetsTheOldRoutesOutput() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\n"
        let target = "/api/json?body=%7B%22a%22%3A1%2C%22n%22%3Anull%7D"
        let proxy = try ProxyHarness(routes: Self.tapeRoute("replay_or_forward, record_misses: true"), top: top, workers: 1)
        defer { proxy.finish() }
        #expect(try proxy.get(target).text == #"{"a":1,"n":null}"#)
        for _ in 0..<3 { #expect(try proxy.get(target).text == #"{"a":1,"n":null}"#) }
        let routes = Self.tapeRoute("replay_or_forward, record_misses: true", extra: "    response: { remove_null_values: true }\n")
            .replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(proxy.stubPort)/v1")
        try ("listen: 127.0.0.1:0\nworkers: 1\n" + top + "routes:\n" + routes).write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        let after = try proxy.get(target)
        #expect(after.text == #"{"a":1}"# && after.header("Serializerd-Source") == "tape")
    }

    /// A recording route appends: each write starts from the file as written (the daemon
    /// lets go of what it wrote). Entries another process adds meanwhile are kept, and a
    /// reload into replay reads every entry back from the file.
    @Test func recordingAppendsKeepsWhatOthersAddAndAReloadReplaysIt() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\n"
        let proxy = try ProxyHarness(routes: Self.tapeRoute("record"), top: top, workers: 1)
        defer { proxy.finish() }
        let file = dir + "/api.har"
        #expect(try proxy.get("/api/json?n=1").status == 200)
        #expect(Self.waitForEntries(file, 1))
        let first = try #require(FileManager.default.contents(atPath: file))
        #expect(try proxy.get("/api/json?n=2").status == 200)
        #expect(Self.waitForEntries(file, 2))
        let second = try #require(FileManager.default.contents(atPath: file))
        // The first file, less its closing `]}}` and newline, begins the second.
        #expect(second.starts(with: first.dropLast(4)) && second.count > first.count)

        // Another process adds an entry (`tape import`), then the daemon records again.
        let saved = dir + "/saved.har"
        try Data(#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[{"startedDateTime":"2024-01-01T00:00:00Z","time":1,"request":{"method":"GET","url":"http://elsewhere.test/v1/json?n=imported","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"}],"cookies":[],"content":{"size":7,"mimeType":"application/json","text":"{\"i\":1}"},"redirectURL":"","headersSize":-1,"bodySize":7},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}]}}"#.utf8)
            .write(to: URL(fileURLWithPath: saved))
        let imported = try ServerBinary.run(["tape", "import", saved, "--route", "api", "--config", proxy.configPath])
        #expect(imported.status == 0, "\(imported.stderrText)")
        #expect(Self.waitForEntries(file, 3))
        #expect(try proxy.get("/api/json?n=3").status == 200)
        #expect(Self.waitForEntries(file, 4))
        let urls = Self.urls(try #require(FileManager.default.contents(atPath: file)))
        #expect(urls.map { $0.split(separator: "=").last.map(String.init) ?? "" } == ["1", "2", "imported", "3"])
        // The admin copy is the file with anything not yet written added.
        #expect(Self.urls(Data(try proxy.get("/-/tapes/api").text.utf8)) == urls)

        try ("listen: 127.0.0.1:0\nworkers: 1\n" + top + "routes:\n"
             + Self.tapeRoute("replay").replacingOccurrences(of: "{stub}", with: "http://127.0.0.1:\(proxy.stubPort)/v1"))
            .write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        let replayed = try proxy.get("/api/json?n=imported")
        #expect(replayed.text == #"{"i":1}"# && replayed.header("Serializerd-Source") == "tape")
        #expect(try proxy.get("/api/json?n=1").header("Serializerd-Source") == "tape")
    }

    /// `/-/recent?format=har` holds each flow whole — the client's headers, query and body,
    /// the answer it got, and the upstream exchange — redacted, valid HAR 1.2; imported as
    /// a tape, it replays every flow with the upstream gone.
    @Test func theRecentHARIsWholeRedactedAndImportsAsATape() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\ncapture: { redact_json: [/password] }\n"
        let proxy = try ProxyHarness(routes: "  - name: api\n    match: { prefix: /api/ }\n    upstream: {stub}\n", top: top)
        let live = try send(proxy)
        var har = Data()
        var entries: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(10)
        while entries.count < Self.requests.count && Date() < deadline {
            har = Data(try proxy.get("/-/recent?format=har").body)
            entries = (((try? JSONSerialization.jsonObject(with: har)) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        }
        #expect(entries.count == Self.requests.count)
        #expect(!String(decoding: har, as: UTF8.self).contains(Self.secret))
        let first = try #require(entries.first?["request"] as? [String: Any])
        let headers = (first["headers"] as? [[String: String]]) ?? []
        #expect(headers.contains { $0["name"] == "Authorization" && $0["value"] == "[redacted]" })
        let query = (first["queryString"] as? [[String: String]]) ?? []
        #expect(query.contains { $0["name"] == "x" && $0["value"] == "1" } && query.contains { $0["name"] == "api_key" && $0["value"] == "[redacted]" })
        let posted = try #require(entries[2]["request"] as? [String: Any])
        #expect((posted["postData"] as? [String: Any])?["text"] as? String == #"{"password":"[redacted]","q":1}"#)
        for (entry, answer) in zip(entries, live) {
            let content = ((entry["response"] as? [String: Any])?["content"] as? [String: Any]) ?? [:]
            #expect(content["text"] as? String == answer.body)
            let upstream = ((entry["_serializerd"] as? [String: Any])?["upstream"] as? [String: Any]) ?? [:]
            #expect(((upstream["request"] as? [String: Any])?["url"] as? String)?.contains("/v1/json") == true)
        }
        let file = dir + "/recent.har"
        try har.write(to: URL(fileURLWithPath: file))
        let checked = try ServerBinary.run(["-c", "exec /usr/bin/python3 \"$0\" \"$1\"", Fixture.path("har_check.py"), file],
                                           executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(checked.status == 0, "\(checked.stdoutText)\(checked.stderrText)")
        #expect(proxy.finish() == 0)

        let config = try Self.config(top + "routes:\n" + Self.tapeRoute("replay", upstream: Self.nowhere))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let imported = try ServerBinary.run(["tape", "import", file, "--route", "api", "--config", config])
        #expect(imported.status == 0 && imported.stdoutText.contains("imported \(Self.requests.count) entries"), "\(imported.stderrText)")
        let player = try ProxyHarness(routes: Self.tapeRoute("replay", upstream: Self.nowhere), top: top)
        defer { player.finish() }
        #expect(try send(player) == live)
    }

    /// A tape directory that fills up (a 256 KiB tmpfs) or turns read-only (`chattr +i`,
    /// which holds for root too): recording stops with `tape_write_failed` naming the
    /// error, forwarding goes on, and the tape written before stays whole.
    @Test func aFullOrReadOnlyTapeDirectoryStopsOnlyRecording() throws {
        func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
            try ServerBinary.run(arguments, executable: URL(fileURLWithPath: tool)).status
        }
        for (setUp, tearDown, error) in [
            ({ (dir: String) in try run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir]) }, { (dir: String) in try run("/bin/umount", [dir]) },
             "No space left on device"),
            ({ (dir: String) in try run("/usr/bin/chattr", ["+i", dir]) }, { (dir: String) in try run("/usr/bin/chattr", ["-i", dir]) },
             "Operation not permitted"),
        ] as [((String) throws -> Int32, (String) throws -> Int32, String)] {
            let dir = try Self.directory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let full = error.hasPrefix("No space")
            if full { #expect(try setUp(dir) == 0) }
            defer { if full { _ = try? tearDown(dir) } }
            let proxy = try ProxyHarness(routes: Self.tapeRoute("record"), top: "tapes: { dir: \(dir) }\n", workers: 1)
            defer { proxy.finish() }
            let file = dir + "/api.har"
            #expect(try proxy.get("/api/json?n=1").status == 200)
            #expect(Self.waitForEntries(file, 1))
            let before = try #require(FileManager.default.contents(atPath: file))
            if !full { #expect(try setUp(dir) == 0) }
            defer { if !full { _ = try? tearDown(dir) } }
            #expect(try proxy.get(full ? "/api/big?bytes=300000" : "/api/json?n=2").status == 200)
            #expect(proxy.daemon.waitForLine { $0.contains("tape_write_failed") && $0.contains(error) } != nil, "\(error)")
            #expect(try proxy.get("/api/json?n=3").status == 200)
            let listed = proxy.json(try proxy.get("/-/tapes"))?["tapes"] as? [[String: Any]]
            #expect((listed?.first?["recording_stopped"] as? String)?.contains(error) == true)
            #expect(FileManager.default.contents(atPath: file) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["api.har"])
        }
    }

    static func urls(_ har: Data) -> [String] {
        let object = try? JSONSerialization.jsonObject(with: har) as? [String: Any]
        return (((object?["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []).compactMap {
            ($0["request"] as? [String: Any])?["url"] as? String
        }
    }

    static func config(_ yaml: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tape-config-\(UUID().uuidString).yaml").path
        try ("listen: 127.0.0.1:0\n" + yaml).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
