import Foundation
import TestSupport
import Testing

/// Completion events through the daemon: logs, /metrics, /-/events, /-/recent and HAR.
@Suite(.timeLimit(.minutes(5)))
struct TelemetryEndToEndTests {
    static let routes = route("api", prefix: "/api/") + "  - name: down\n    match: { prefix: /down/ }\n    upstream: http://127.0.0.1:9/\n"

    @Test func metricsAndLogsMoveExactlyPerRouteAndOutcome() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        // Many connections from several threads land on both workers; the scrape must
        // still see every request once.
        let statuses = Locked<[Int]>([])
        let port = proxy.port
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<5 {
                let status = (try? RawHTTP.request(port: port, target: "/api/json").status) ?? -1
                statuses.update { $0.append(status) }
            }
        }
        #expect(statuses.current == Array(repeating: 200, count: 20))
        for _ in 0..<3 { #expect(try proxy.get("/nowhere").status == 404) }
        for _ in 0..<2 { #expect(try proxy.get("/down/x").status == 502) }
        #expect(try proxy.get("/api/json?status=404").status == 404)
        #expect(try proxy.get("/api/json", method: "POST", body: Array("{}".utf8)).status == 200)

        let scrape = try proxy.get("/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let metrics = Metrics(scrape.text)
        #expect(metrics[#"serializerd_requests_total{route="api",method="GET",code="200",outcome="ok"}"#] == 20)
        #expect(metrics[#"serializerd_requests_total{route="api",method="POST",code="200",outcome="ok"}"#] == 1)
        #expect(metrics[#"serializerd_requests_total{route="(unmatched)",method="GET",code="404",outcome="no_route"}"#] == 3)
        #expect(metrics[#"serializerd_requests_total{route="down",method="GET",code="502",outcome="upstream_unavailable"}"#] == 2)
        #expect(metrics[#"serializerd_requests_total{route="api",method="GET",code="404",outcome="unacceptable_status"}"#] == 1)
        #expect(metrics[#"serializerd_request_duration_seconds_count{route="api"}"#] == 22)
        #expect(metrics[#"serializerd_request_duration_seconds_bucket{route="api",le="+Inf"}"#] == 22)
        #expect(metrics[#"serializerd_upstream_duration_seconds_count{route="api"}"#] == 22)
        #expect(metrics[#"serializerd_upstream_duration_seconds_count{route="down"}"#] == 2)
        #expect(metrics[#"serializerd_serialization_duration_seconds_count{route="api",serializer="json"}"#] == 22)
        // The stub's JSON body is 35 bytes; normalized it is 29.
        #expect(metrics[#"serializerd_upstream_response_bytes_total{route="api"}"#] == Double(22 * 35))
        #expect((metrics[#"serializerd_response_bytes_total{route="api"}"#] ?? 0) > Double(21 * 29))
        #expect(metrics["serializerd_inflight_requests"] == 0)
        #expect(metrics[#"serializerd_build_info{version="0.1.0"}"#] == 1)
        #expect((metrics["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((metrics["process_open_fds"] ?? 0) > 3)
        #expect((metrics["process_start_time_seconds"] ?? 0) > 1_700_000_000)
        #expect(metrics["process_cpu_seconds_total"] != nil && metrics["process_max_fds"] != nil)
        try expectPromtoolAccepts(scrape.text)

        // Exactly one request_completed line per request, with DESIGN §6's fields.
        // (The scrape itself succeeded: a debug line, not written at the default level.)
        let scrapeID = try #require(scrape.header("X-Request-Id"))
        #expect(proxy.daemon.waitForText { completedLines($0).filter { $0["route"] as? String != "(admin)" }.count >= 27 })
        let lines = completedLines(proxy.daemon.text)
        #expect(lines.filter { $0["route"] as? String != "(admin)" }.count == 27)
        #expect(!lines.contains { $0["request_id"] as? String == scrapeID })
        let ids = lines.compactMap { $0["request_id"] as? String }
        #expect(Set(ids).count == ids.count)
        let first = try #require(lines.first { $0["route"] as? String == "api" && $0["status"] as? Int == 200 })
        for key in ["ts", "level", "request_id", "route", "method", "path", "upstream_url", "status", "upstream_status", "content_type",
                    "serializer", "outcome", "bytes_in", "bytes_out", "duration_ms", "upstream_ms", "serialize_ms", "error"] {
            #expect(first.keys.contains(key), "missing \(key)")
        }
        #expect(first["upstream_url"] as? String == "http://127.0.0.1:\(proxy.stubPort)/v1/json")
        #expect(first["bytes_in"] as? Int == 35 && first["bytes_out"] as? Int == 29 && first["outcome"] as? String == "ok")
        let down = try #require(lines.first { $0["route"] as? String == "down" })
        #expect(down["level"] as? String == "error" && down["outcome"] as? String == "upstream_unavailable")
        #expect((down["error"] as? String)?.isEmpty == false)
    }

    @Test func reloadsAreCountedByResult() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let good = try String(contentsOfFile: proxy.configPath, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        try "routes: [oops\n".write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reload_failed\"") } != nil)
        try good.write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics[#"serializerd_config_reloads_total{result="ok"}"#] == 1)
        #expect(metrics[#"serializerd_config_reloads_total{result="error"}"#] == 1)
    }

    @Test func aSubscriberSeesEveryLaterCompletion() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        #expect(stream.head.hasPrefix("HTTP/1.1 200"))
        #expect(stream.head.lowercased().contains("content-type: text/event-stream"))
        for index in 0..<3 {
            _ = try proxy.get("/api/json", headers: [("X-Request-Id", "sse-\(index)")])
        }
        _ = try proxy.get("/nowhere", headers: [("X-Request-Id", "sse-404")])
        // Each worker hands its events over on its own schedule: wait for all four.
        let text = stream.read(untilAll: ["id: sse-0\n", "id: sse-1\n", "id: sse-2\n", "id: sse-404\n"])
        for id in ["sse-0", "sse-1", "sse-2", "sse-404"] {
            #expect(text.contains("event: request_completed\nid: \(id)\ndata: {"), "\(text)")
        }
        let data = text.components(separatedBy: "\n").filter { $0.hasPrefix("data: {") }.map { $0.dropFirst(6) }
        let events = data.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.contains { $0["request_id"] as? String == "sse-404" && $0["outcome"] as? String == "no_route" })
        // The viewer's own admin requests are not part of the live view.
        #expect(!events.contains { $0["route"] as? String == "(admin)" })
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_event_subscribers"] == 1)
    }

    @Test func recentAndHARDescribeTheLastRequests() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        for index in 0..<3 { _ = try proxy.get("/api/json?secret=1", headers: [("X-Request-Id", "recent-\(index)")]) }
        _ = try proxy.get("/down/x", headers: [("X-Request-Id", "recent-down")])
        // Events reach the ring once per loop turn: poll briefly.
        var recent: [[String: Any]] = []
        for _ in 0..<50 {
            let doc = proxy.json(try proxy.get("/-/recent"))
            recent = doc?["events"] as? [[String: Any]] ?? []
            if recent.count == 4 { break }
            usleep(20_000)
        }
        #expect(recent.map { $0["request_id"] as? String } == ["recent-0", "recent-1", "recent-2", "recent-down"])
        #expect(recent.allSatisfy { ($0["path"] as? String)?.contains("secret") == false })   // no query strings

        let har = try proxy.get("/-/recent?format=har")
        #expect(har.status == 200 && har.header("Content-Type") == "application/json; charset=utf-8")
        let log = try #require(proxy.json(har)?["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "serializerd")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 4)
        for entry in entries {
            try validateHAREntry(entry, port: proxy.port)
        }
        let failed = try #require(entries.last)
        #expect((failed["response"] as? [String: Any])?["status"] as? Int == 502)
        #expect((failed["_serializerd"] as? [String: Any])?["outcome"] as? String == "upstream_unavailable")

        let bad = try proxy.get("/-/recent?format=xml")
        #expect(bad.status == 400 && bad.header("Content-Type") == "application/problem+json")
        #expect(proxy.json(bad)?["type"] as? String == "urn:serializerd:invalid-query")
        #expect(try proxy.get("/-/recent?format=har&x=1").status == 400)
        #expect(try proxy.get("/-/nothing").status == 404)
        #expect(try proxy.get("/metrics", method: "POST").status == 405)
        let routes = proxy.json(try proxy.get("/-/routes"))?["routes"] as? [[String: Any]]
        #expect(routes?.map { $0["name"] as? String } == ["api", "down"])
    }

    @Test func adminEndpointsRefuseOtherNetworks() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "admin: { allow: [10.0.0.0/8] }\n")
        defer { proxy.finish() }
        for path in ["/metrics", "/-/events", "/-/recent", "/-/routes", "/-/health"] {
            let response = try proxy.get(path)
            #expect(response.status == 403, "\(path)")
            #expect(proxy.json(response)?["type"] as? String == "urn:serializerd:forbidden")
        }
    }

    @Test func aStuckSubscriberCostsOnlyItself() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        // Subscribes, then never reads: its buffers fill, its events drop, it is evicted.
        let stuck = try EventStreamClient(port: proxy.port, receiveBuffer: 4096)
        defer { stuck.close() }
        let statuses = Locked<[Int: Int]>([:])
        let port = proxy.port
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<400 {
                let status = (try? RawHTTP.request(port: port, target: "/api/json", timeout: 10).status) ?? -1
                statuses.update { $0[status, default: 0] += 1 }
            }
        }
        #expect(statuses.current == [200: 3200])
        var metrics = Metrics(try proxy.get("/metrics").text)
        #expect((metrics["serializerd_event_drops_total"] ?? 0) > 0)
        // Disconnected once it has been behind for the stall limit (5 s), checked each second.
        let deadline = Date().addingTimeInterval(12)
        while Date() < deadline && metrics["serializerd_event_evictions_total"] != 1 {
            usleep(250_000)
            metrics = Metrics(try proxy.get("/metrics").text)
        }
        #expect(metrics["serializerd_event_evictions_total"] == 1)
        #expect(metrics["serializerd_event_subscribers"] == 0)
        // Its log line leaves in the next batch (≤ 5 ms) and crosses a pipe: poll for it.
        #expect(proxy.daemon.waitForLine(timeout: 5) { $0.contains("\"outcome\":\"evicted\"") } != nil)
        // Everyone else is served as before.
        #expect(try proxy.get("/api/json").status == 200)
    }

    /// A subscriber that reads gets every event of a burst, in time: rounds of 800 events
    /// of 3 KB (long paths) are far more than one delivery's 128 KiB, so the stream must
    /// keep sending while the socket takes it rather than wait for a wake-up or the tick.
    /// Each round fits the subscriber's queue (1,000 events), so a reader the machine
    /// starves for a while still loses nothing; the next round starts once it caught up.
    @Test func aReadingSubscriberGetsEveryEventOfABurst() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        let received = Locked((text: [UInt8](), events: 0, done: false))
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            let marker = Array("event: request_completed\nid: burst-".utf8)
            var text: [UInt8] = [], events = 0, next = 0
            let deadline = Date().addingTimeInterval(90)
            while events < 3_201 && Date() < deadline && !received.current.done {
                text += stream.read(until: "id: never-sent\n", timeout: 0.05).utf8
                while next + marker.count <= text.count {
                    if text[next] == marker[0], text[next..<next + marker.count].elementsEqual(marker) { events += 1 }
                    next += 1
                }
                let seen = events
                received.update { $0.events = seen }
            }
            let all = text
            received.update { $0.text = all }
        }
        // The reader stops before its descriptor closes, even when a round fails.
        defer {
            received.update { $0.done = true }
            reading.wait()
        }
        let port = proxy.port, path = "/nowhere/" + String(repeating: "p", count: 3_000)
        for round in 0..<4 {
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                for index in 0..<100 {
                    _ = try? RawHTTP.request(port: port, target: path, headers: [("X-Request-Id", "burst-\(round)-\(worker)-\(index)")])
                }
            }
            // Delivered in well under a second here; a stream that waits for wake-ups and
            // ticks takes over 10 s for one round.
            let deadline = Date().addingTimeInterval(10)
            while received.current.events < 800 * (round + 1) && Date() < deadline { usleep(10_000) }
            try #require(received.current.events == 800 * (round + 1), "round \(round)")
        }
        _ = try proxy.get("/nowhere", headers: [("X-Request-Id", "burst-end")])
        #expect(reading.wait(timeout: .now() + 10) == .success)
        received.update { $0.done = true }
        reading.wait()
        let text = String(decoding: received.current.text, as: UTF8.self)
        #expect(received.current.events == 3_201)
        #expect(!text.contains("event: dropped"))
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_event_drops_total"] == 0)
    }

    @Test func subscriberChurnLeavesNoDescriptorsOrSubscribersBehind() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let before = Metrics(try proxy.get("/metrics").text)
        let port = proxy.port
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<500 {
                if let client = try? EventStreamClient(port: port) { client.close() }
            }
        }
        // Closes are noticed on the daemon's loop; give it a moment.
        var after = Metrics(try proxy.get("/metrics").text)
        for _ in 0..<100 where after["serializerd_event_subscribers"] != 0 || (after["process_open_fds"] ?? 0) > (before["process_open_fds"] ?? 0) + 2 {
            usleep(50_000)
            after = Metrics(try proxy.get("/metrics").text)
        }
        #expect(after["serializerd_event_subscribers"] == 0)
        #expect((after["process_open_fds"] ?? 999) <= (before["process_open_fds"] ?? 0) + 2)
        #expect((after["process_resident_memory_bytes"] ?? 0) < (before["process_resident_memory_bytes"] ?? 0) + 32_000_000)
        let streamed = { completedLines(proxy.daemon.text).filter { $0["path"] as? String == "/-/events" }.count }
        for _ in 0..<100 where streamed() < 2000 { usleep(50_000) }
        #expect(streamed() == 2000)
    }

    @Test func streamsEndCleanlyWhenTheDaemonStops() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        var stopped = false
        defer { if !stopped { proxy.finish() } }
        let stream = try EventStreamClient(port: proxy.port)
        defer { stream.close() }
        _ = try proxy.get("/api/json", headers: [("X-Request-Id", "before-stop")])
        #expect(stream.read(until: "id: before-stop\n").contains("id: before-stop\n"))
        proxy.daemon.signal(SIGTERM)
        // The chunked stream ends properly (last chunk), and the daemon exits 0 at once.
        #expect(stream.read(until: "0\r\n\r\n", timeout: 5).hasSuffix("0\r\n\r\n"))
        #expect(proxy.daemon.waitForExit(timeout: 5) == 0)
        stopped = true
        proxy.finish()
        let streamLine = completedLines(proxy.daemon.text).first { $0["path"] as? String == "/-/events" }
        #expect(streamLine?["outcome"] as? String == "unavailable")
        #expect((streamLine?["bytes_out"] as? Int ?? 0) > 0)
    }

    @Test func aClientThatLeavesIsLoggedAsGone() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        // Gives up after 0.3 s while the upstream takes 1 s.
        _ = try? RawHTTP.request(port: proxy.port, target: "/api/slow?seconds=1", headers: [("X-Request-Id", "gone-1")], timeout: 0.3)
        let line = proxy.daemon.waitForLine(timeout: 10) { $0.contains("\"request_id\":\"gone-1\"") }
        #expect(line?.contains("\"status\":499") == true, "\(line ?? "none")")
        #expect(line?.contains("\"outcome\":\"client_gone\"") == true)
    }

    @Test func logFormatAndLevelFollowTheConfigAndReloads() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "log: { format: text, level: notice }\n")
        defer { proxy.finish() }
        _ = try proxy.get("/api/json", headers: [("X-Request-Id", "quiet-ok")])
        _ = try proxy.get("/nowhere", headers: [("X-Request-Id", "loud-404")])
        let line = proxy.daemon.waitForLine { $0.contains("request_id=loud-404") }
        #expect(line?.contains(" WARNING request_completed ") == true, "\(proxy.daemon.text)")
        #expect(proxy.daemon.text.contains(" NOTICE ready "))
        #expect(line?.contains("route=(unmatched)") == true && line?.contains("status=404") == true)
        #expect(line?.contains("error=\"no route matches GET /nowhere; GET /-/routes lists the configured routes\"") == true, "\(line ?? "")")
        #expect(!proxy.daemon.text.contains("quiet-ok"))

        let config = try String(contentsOfFile: proxy.configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "log: { format: text, level: notice }", with: "log: { format: json, level: info }")
            .write(toFile: proxy.configPath, atomically: true, encoding: .utf8)
        proxy.daemon.signal(SIGHUP)
        #expect(proxy.daemon.waitForLine { $0.contains("\"msg\":\"config_reloaded\"") } != nil)
        _ = try proxy.get("/api/json", headers: [("X-Request-Id", "json-ok")])
        let json = proxy.daemon.waitForLine { $0.contains("\"request_id\":\"json-ok\"") }
        #expect(json?.hasPrefix("{\"ts\":") == true)
    }
}

/// `name{labels} value` lines of a scrape.
struct Metrics {
    var values: [String: Double] = [:]

    init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
    }

    subscript(_ series: String) -> Double? { values[series] }
}

func completedLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").filter { $0.contains("\"msg\":\"request_completed\"") }
        .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}

func expectPromtoolAccepts(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let promtool = URL(fileURLWithPath: "/usr/bin/promtool")
    try #require(FileManager.default.isExecutableFile(atPath: promtool.path), "promtool (Debian package prometheus) is needed")
    let result = try ServerBinary.run(["check", "metrics"], stdin: Array(text.utf8), executable: promtool)
    #expect(result.status == 0, "promtool: \(result.stdoutText) \(result.stderrText)", sourceLocation: sourceLocation)
}

/// HAR 1.2's required members and types for one entry.
func validateHAREntry(_ entry: [String: Any], port: Int) throws {
    #expect(entry["startedDateTime"] as? String != nil)
    let time = try #require(entry["time"] as? Double)
    let request = try #require(entry["request"] as? [String: Any])
    for key in ["method", "url", "httpVersion"] { #expect(request[key] is String, "request.\(key)") }
    for key in ["cookies", "headers", "queryString"] { #expect(request[key] is [Any], "request.\(key)") }
    for key in ["headersSize", "bodySize"] { #expect(request[key] is Int, "request.\(key)") }
    #expect((request["url"] as? String)?.hasPrefix("http://127.0.0.1:\(port)/") == true)
    let response = try #require(entry["response"] as? [String: Any])
    for key in ["status", "headersSize", "bodySize"] { #expect(response[key] is Int, "response.\(key)") }
    for key in ["statusText", "httpVersion", "redirectURL"] { #expect(response[key] is String, "response.\(key)") }
    for key in ["cookies", "headers"] { #expect(response[key] is [Any], "response.\(key)") }
    let content = try #require(response["content"] as? [String: Any])
    #expect(content["size"] is Int && content["mimeType"] is String)
    #expect(entry["cache"] is [String: Any])
    let timings = try #require(entry["timings"] as? [String: Any])
    let send = try #require(timings["send"] as? Double), wait = try #require(timings["wait"] as? Double)
    let receive = try #require(timings["receive"] as? Double)
    #expect(send >= 0 && wait >= 0 && receive >= 0)
    #expect(abs(send + wait + receive - time) < 0.01)
}

/// A raw `/-/events` client: reads the head, then whatever the stream sends.
final class EventStreamClient: @unchecked Sendable {
    let fd: Int32
    private(set) var head = ""
    private var pending: [UInt8] = []

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = try RawHTTP.connect(port: port, timeout: 0.2, receiveBuffer: receiveBuffer)
        let request = Array("GET /-/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let text = read(until: "\r\n\r\n", timeout: 5)
        guard let end = text.range(of: "\r\n\r\n") else {
            Glibc.close(fd)
            throw TestFailure("no event-stream head: \(text)")
        }
        head = String(text[..<end.lowerBound])
        pending = Array(text[end.upperBound...].utf8)
    }

    /// Everything read until `marker` appears (or `timeout` passes).
    func read(until marker: String, timeout: TimeInterval = 10) -> String {
        read(untilAll: [marker], timeout: timeout)
    }

    /// Everything read until every marker has appeared (or `timeout` passes).
    func read(untilAll markers: [String], timeout: TimeInterval = 10) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = pending
        pending = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        // Only the new bytes (and a marker's length before them) are searched: a burst's
        // stream runs to megabytes, and a reader slower than the daemon sees drops.
        var missing = markers.map { Array($0.utf8) }
        var searched = 0
        while true {
            let from = max(0, searched - (missing.map(\.count).max() ?? 0))
            missing.removeAll { buffer[from...].firstRange(of: $0) != nil }
            searched = buffer.count
            guard !missing.isEmpty, Date() < deadline else { break }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            if n > 0 { buffer += chunk[..<n] }
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    func close() { Glibc.close(fd) }
}
