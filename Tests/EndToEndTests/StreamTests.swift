import Foundation
import TestSupport
import Testing

/// SSE, NDJSON and byte streams through the daemon (DESIGN §9) against an upstream that
/// answers over time (Tests/Fixtures/stream_upstream.py).
@Suite(.timeLimit(.minutes(5)))
struct StreamTests {
    static func harness(_ stream: String = "", extra: String = "", top: String = "") throws -> ProxyHarness {
        let routes = "  - name: live\n    match: { prefix: /live/ }\n    upstream: {stub}\n"
            + (stream.isEmpty ? "" : "    stream: \(stream)\n") + extra
        return try ProxyHarness(routes: routes, top: top, script: "stream_upstream.py")
    }

    /// A streamed reply read as it arrives: its head, and its chunked body so far.
    final class Reader {
        let connection: RawConnection
        init(_ proxy: ProxyHarness, _ target: String) throws {
            connection = try RawConnection(port: proxy.port)
            connection.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }

        var head: String {
            let bytes = connection.unread
            guard let end = RawHTTP.find([13, 10, 13, 10], in: bytes) else { return "" }
            return String(decoding: bytes[..<end], as: UTF8.self)
        }

        /// The body so far, and whether its last chunk has come.
        var body: (text: String, ended: Bool) {
            let (bytes, ended) = bodyBytes
            return (String(decoding: bytes, as: UTF8.self), ended)
        }

        var bodyBytes: ([UInt8], Bool) {
            let bytes = connection.unread
            guard let end = RawHTTP.find([13, 10, 13, 10], in: bytes) else { return ([], false) }
            var at = end + 4, out: [UInt8] = []
            while let lineEnd = RawHTTP.find([13, 10], in: Array(bytes[at...])) {
                let size = Int(String(decoding: bytes[at..<(at + lineEnd)], as: UTF8.self), radix: 16) ?? -1
                let start = at + lineEnd + 2
                if size == 0 { return (out, true) }
                guard size > 0, bytes.count >= start + size + 2 else { break }
                out += bytes[start..<(start + size)]
                at = start + size + 2
            }
            return (out, false)
        }

        /// Reads until `done` holds for the body (or the deadline); the result of `done`.
        @discardableResult
        func wait(timeout: Double = 10, _ done: (String, Bool) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let (text, ended) = body
                if done(text, ended) { return true }
                _ = connection.read(timeout: min(0.05, max(0.001, deadline.timeIntervalSinceNow)))
                if connection.closedByPeer { break }
            }
            let (text, ended) = body
            return done(text, ended)
        }
    }

    static func dataLines(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
    }

    @Test func sseEventsArriveOneByOneEachNormalized() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let reader = try Reader(proxy, "/live/sse?n=5&gap=0.3&comment=1")
        var arrivals: [Date] = []
        #expect(reader.wait { text, _ in
            let count = Self.dataLines(text).count
            while arrivals.count < count { arrivals.append(Date()) }
            return count == 5
        })
        // One event at a time, not one lump at the end.
        #expect(arrivals.count == 5 && arrivals[4].timeIntervalSince(arrivals[0]) > 0.8, "\(arrivals)")
        #expect(reader.wait { _, ended in ended })
        let head = reader.head.lowercased()
        #expect(head.hasPrefix("http/1.1 200") && head.contains("content-type: text/event-stream") && head.contains("cache-control: no-cache"))
        #expect(head.contains("transfer-encoding: chunked") && !head.contains("content-length") && head.contains("x-request-id: "))
        #expect(head.contains("serializerd-source: upstream") && head.contains("server-timing: upstream;dur="))
        let text = reader.body.text
        #expect(text.hasPrefix(": keep-alive\n"))
        #expect(text.contains("event: tick\nid: 0\ndata: "))
        for (i, line) in Self.dataLines(text).enumerated() {
            let value = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(value?["i"] as? Int == i)
            #expect(!line.contains(" "), "normalized JSON is compact: \(line)")
        }
        #expect(proxy.daemon.waitForLine { $0.contains("\"stream\":{\"kind\":\"sse\",\"events\":5,\"invalid\":0,\"dropped\":0") } != nil)
        let scrape = try proxy.get("/metrics").text
        let metrics = Metrics(scrape)
        #expect(metrics[#"serializerd_stream_events_total{route="live",kind="sse",result="ok"}"#] == 5, "\(scrape)")
        #expect(metrics[#"serializerd_open_streams{route="live",kind="sse"}"#] == 0)
        try expectPromtoolAccepts(scrape)
    }

    @Test func anOpenStreamIsCountedWhileItLasts() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let reader = try Reader(proxy, "/live/endless?gap=0.05")
        #expect(reader.wait { text, _ in Self.dataLines(text).count >= 2 })
        #expect(Metrics(try proxy.get("/metrics").text)[#"serializerd_open_streams{route="live",kind="sse"}"#] == 1)
        // /-/inflight shows the open stream with its summary so far (the board is refreshed
        // on the worker's progress tick).
        var listed: [String: Any]?
        let seen = Date().addingTimeInterval(5)
        while listed == nil, Date() < seen {
            let board = try JSONSerialization.jsonObject(with: Data(try proxy.get("/-/inflight").body)) as? [String: Any]
            let entries = board?["requests"] as? [[String: Any]] ?? []
            listed = entries.compactMap { $0["stream"] as? [String: Any] }.first { ($0["events"] as? Int ?? 0) >= 2 }
            if listed == nil { usleep(50_000) }
        }
        #expect(listed?["kind"] as? String == "sse" && listed?["invalid"] as? Int == 0, "\(listed ?? [:])")
        shutdown(reader.connection.fd, Int32(SHUT_RDWR))
        var open: Double? = 1
        let deadline = Date().addingTimeInterval(5)
        while open != 0, Date() < deadline {
            open = Metrics(try proxy.get("/metrics").text)[#"serializerd_open_streams{route="live",kind="sse"}"#]
            usleep(20_000)
        }
        #expect(open == 0)
    }

    @Test func anHTTP10ClientGetsACloseDelimitedStream() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        connection.send("GET /live/sse?n=2&gap=0.1 HTTP/1.0\r\nHost: localhost\r\n\r\n")
        #expect(connection.waitForClose(timeout: 10))
        let text = String(decoding: connection.unread, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts[0].lowercased()
        #expect(head.contains("connection: close") && !head.contains("transfer-encoding") && !head.contains("content-length"), "\(head)")
        #expect(parts.count == 2 && Self.dataLines(parts[1]).count == 2 && parts[1].hasSuffix("\n\n"), "\(text)")
    }

    @Test func networkConditionsApplyToStreams() throws {
        var extra = ""
        for (name, network) in [("late", "{ latency: 400ms }"), ("cut", "{ fail_rate: 1, faults: [truncate], seed: 7 }"),
                                ("reset", "{ fail_rate: 1, faults: [reset] }"), ("chaos", #"{ chaos: ["drop=/nested"] }"#),
                                ("slow", "{ down: 2KiB }")] {
            extra += "  - name: \(name)\n    match: { prefix: /\(name)/ }\n    upstream: {stub}\n    network: \(network)\n"
        }
        let proxy = try Self.harness(extra: extra)
        defer { proxy.finish() }
        // Latency holds the head; the events still all arrive.
        let asked = Date()
        let late = try Reader(proxy, "/late/sse?n=3")
        #expect(late.wait { _, ended in ended })
        #expect(Date().timeIntervalSince(asked) >= 0.39 && Self.dataLines(late.body.text).count == 3)
        #expect(late.head.lowercased().contains("serializerd-fault-applied: latency=400ms"), "\(late.head)")
        // A truncated stream is cut (no last chunk) after a few events.
        let cut = try Reader(proxy, "/cut/sse?n=40&gap=0.01")
        #expect(cut.connection.waitForClose(timeout: 10))
        let kept = Self.dataLines(cut.body.text).count
        #expect(!cut.body.ended && kept >= 1 && kept <= 8, "\(kept): \(cut.body.text)")
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"injected_fault\"") && $0.contains("\"kind\":\"sse\"") } != nil)
        // A reset: no reply at all.
        let reset = try RawConnection(port: proxy.port)
        reset.send("GET /reset/sse?n=3 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(reset.waitForClose(timeout: 10) && reset.unread.isEmpty)
        // Chaos on every event.
        let chaos = try Reader(proxy, "/chaos/sse?n=3")
        #expect(chaos.wait { $1 })
        let lines = Self.dataLines(chaos.body.text)
        #expect(lines.count == 3 && lines.allSatisfy { !$0.contains("nested") && $0.contains("\"i\":") }, "\(chaos.body.text)")
        #expect(proxy.daemon.waitForLine { $0.contains("\"route\":\"chaos\"") && $0.contains("\"faults\":\"drop=/nested\"") } != nil)
        // `down` paces every byte: 8 events of about 80 bytes at 2 KiB/s take about 0.3 s
        // though the upstream sends them at once, and all of them arrive, the end too.
        let paced = try Reader(proxy, "/slow/sse?n=8")
        let started = Date()
        #expect(paced.wait { $1 })
        let took = Date().timeIntervalSince(started)
        #expect(Self.dataLines(paced.body.text).count == 8 && took >= 0.2, "\(took) s: \(paced.body.text)")
    }

    @Test func eachOnInvalidMode() throws {
        var extra = ""
        for (name, mode) in [("errors", "error_event"), ("drops", "drop"), ("closes", "close")] {
            extra += "  - name: \(name)\n    match: { prefix: /\(name)/ }\n    upstream: {stub}\n    stream: { on_invalid: \(mode) }\n"
        }
        let proxy = try Self.harness(extra: extra)
        defer { proxy.finish() }
        let target = "sse?n=4&kind=mixed&done=1"
        let pass = try Reader(proxy, "/live/" + target)
        #expect(pass.wait { $1 })
        #expect(Self.dataLines(pass.body.text) == [#"{"i":0,"b":1.5,"nested":{"z":null}}"#, "{not json",
                                                   #"{"i":2,"b":1.5,"nested":{"z":null}}"#, "{not json", "[DONE]"], "\(pass.body.text)")
        #expect(Self.dataLines(pass.body.text).filter { $0 == "{not json" }.count == 2)

        let errors = try Reader(proxy, "/errors/" + target)
        #expect(errors.wait { $1 })
        let errorText = errors.body.text
        #expect(errorText.components(separatedBy: "event: serializerd-error\n").count == 3, "\(errorText)")
        #expect(errorText.contains("urn:serializerd:") && !errorText.contains("{not json\n"))

        let drops = try Reader(proxy, "/drops/" + target)
        #expect(drops.wait { $1 })
        #expect(Self.dataLines(drops.body.text).count == 3 && !drops.body.text.contains("serializerd-error"))

        let closes = try Reader(proxy, "/closes/" + target)
        #expect(closes.wait { $1 })
        let closed = closes.body.text
        #expect(Self.dataLines(closed).count == 2 && closed.contains("event: serializerd-error") && !closed.contains("\"i\":2"), "\(closed)")
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"invalid_event\"") } != nil)
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics[#"serializerd_stream_events_total{route="live",kind="sse",result="invalid"}"#] == 2)
        #expect(metrics[#"serializerd_stream_events_total{route="drops",kind="sse",result="dropped"}"#] == 2)
        #expect(metrics[#"serializerd_stream_events_total{route="drops",kind="sse",result="ok"}"#] == 3)
    }

    @Test func lineEndingsOfEveryKindAndTheSentinel() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        for eol in ["crlf", "cr"] {
            let reader = try Reader(proxy, "/live/sse?n=3&eol=\(eol)&done=1")
            #expect(reader.wait { $1 })
            let lines = Self.dataLines(reader.body.text)
            #expect(lines.count == 4 && lines.last == "[DONE]" && lines[2].contains("\"i\":2"), "\(eol): \(reader.body.text)")
        }
    }

    @Test func ndjsonAndJSONSequencesRecordByRecord() throws {
        let proxy = try Self.harness("{ on_invalid: error_event }")
        defer { proxy.finish() }
        for query in ["n=3", "n=3&seq=1"] {
            let reader = try Reader(proxy, "/live/ndjson?\(query)")
            #expect(reader.wait { $1 })
            #expect(reader.head.lowercased().contains("content-type: application/x-ndjson"))
            let lines = reader.body.text.split(separator: "\n")
            #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("{\"i\":") && $0.hasSuffix(",\"b\":1.5,\"nested\":{\"z\":null}}") },
                    "\(query): \(reader.body.text)")
        }
        let mixed = try Reader(proxy, "/live/ndjson?n=2&kind=mixed")
        #expect(mixed.wait { $1 })
        let lines = mixed.body.text.split(separator: "\n")
        #expect(lines.count == 2 && lines[1].contains("urn:serializerd:"), "\(mixed.body.text)")
    }

    @Test func aSilentStreamEndsAfterIdleAndTheUpstreamIsClosed() throws {
        let proxy = try Self.harness("{ idle: 500ms }")
        defer { proxy.finish() }
        let reader = try Reader(proxy, "/live/silent")
        #expect(reader.wait(timeout: 10) { $1 })
        #expect(reader.body.text.contains("event: serializerd-error") && reader.body.text.contains("upstream-timeout")
                && reader.body.text.contains("(stream.idle)"), "\(reader.body.text)")
        #expect(proxy.stub.waitForLine(timeout: 5) { $0 == "closed silent" } != nil)
    }

    @Test func aFailureMidStreamEndsSSEWithAnEventAndCutsNDJSON() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let sse = try Reader(proxy, "/live/sse?n=2&end=reset")
        #expect(sse.wait { $1 })
        #expect(Self.dataLines(sse.body.text).count == 3 && sse.body.text.contains("upstream-unavailable"), "\(sse.body.text)")
        let ndjson = try Reader(proxy, "/live/ndjson?n=2&end=reset")
        #expect(ndjson.connection.waitForClose(timeout: 10))
        #expect(!ndjson.body.ended && ndjson.body.text.split(separator: "\n").count == 2, "\(ndjson.body.text)")
    }

    @Test func aClientThatLeavesClosesTheUpstreamAtOnce() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let reader = try Reader(proxy, "/live/endless?gap=0.01")
        #expect(reader.wait { text, _ in Self.dataLines(text).count >= 3 })
        let left = Date()
        shutdown(reader.connection.fd, Int32(SHUT_RDWR))
        #expect(proxy.stub.waitForLine(timeout: 5) { $0 == "closed endless" } != nil)
        #expect(Date().timeIntervalSince(left) < 1.0)
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"client_gone\"") && $0.contains("\"kind\":\"sse\"") } != nil)
    }

    @Test func aStalledClientPausesTheUpstream() throws {
        let proxy = try Self.harness("{ bytes: [application/octet-stream] }")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port, receiveBuffer: 16384)
        connection.send("GET /live/flood?mb=100 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        func sent() -> Int {
            guard let reply = try? RawHTTP.request(port: proxy.stubPort, target: "/sent"),
                  let object = try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Int] else { return -1 }
            return object["flood"] ?? -1
        }
        // The upstream stops being read: what it sent stops growing, far short of 100 MiB.
        var last = -1, steady = false
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            usleep(300_000)
            let now = sent()
            if now > 0 && now == last { steady = true; break }
            last = now
        }
        #expect(steady && last < 24 << 20, "sent \(last)")
        // Reading again lets it go on.
        _ = connection.read(timeout: 1)
        let moved = Date().addingTimeInterval(10)
        while sent() == last && Date() < moved { _ = connection.read(timeout: 0.1) }
        #expect(sent() > last)
    }

    @Test func aClientThatTakesNothingIsDroppedAfterClientIdle() throws {
        let proxy = try Self.harness("{ bytes: [application/octet-stream], idle: 1s }", top: "timeouts: { client_idle: 1s }\n")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port, receiveBuffer: 16384)
        connection.send("GET /live/flood?mb=100 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(proxy.daemon.waitForLine(timeout: 15) { $0.contains("\"outcome\":\"client_gone\"") && $0.contains("took nothing") } != nil)
        #expect(proxy.stub.waitForLine(timeout: 5) { $0 == "closed flood" } != nil)
    }

    @Test func bytesStreamPastTheBodyLimitUntouched() throws {
        let proxy = try Self.harness("{ bytes: [application/octet-stream] }", top: "limits: { max_response_body: 1MiB }\n")
        defer { proxy.finish() }
        let size = 3 << 20
        let reader = try Reader(proxy, "/live/bytes?size=\(size)")
        #expect(reader.wait(timeout: 20) { $1 })
        let body = reader.bodyBytes.0
        #expect(reader.head.lowercased().contains("content-type: application/octet-stream"))
        #expect(body.count == size && body.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
    }

    @Test func anUnacceptableStatusIsAProblemAndModeOffBuffers() throws {
        let proxy = try Self.harness(extra: "  - name: whole\n    match: { prefix: /whole/ }\n    upstream: {stub}\n    stream: { mode: off }\n    response: { serializer: raw }\n"
                                     + "  - name: slow\n    match: { prefix: /slow/ }\n    upstream: {stub}\n    timeout: 20s\n    stream: { idle: 500ms }\n")
        defer { proxy.finish() }
        let failed = try proxy.get("/live/status?n=503")
        #expect(failed.status == 503 && failed.text.contains("urn:serializerd:"))
        // An error answer that never ends is answered from what came within stream.idle.
        let started = Date()
        let endless = try proxy.get("/slow/status?n=500&hang=1")
        #expect(endless.status == 500 && endless.text.contains("unacceptable-status") && endless.text.contains("nope"), "\(endless.text)")
        #expect(Date().timeIntervalSince(started) < 5)
        let whole = try proxy.get("/whole/sse?n=2")
        #expect(whole.status == 200 && whole.text.contains(#"\"i\": 1"#), "\(whole.text)")
    }

    @Test func hostileEventsEndClearlyAndTheStreamGoesOn() throws {
        let proxy = try Self.harness("{ on_invalid: error_event }", extra: "    websocket: { max_message: 1MiB }\n")
        defer { proxy.finish() }
        // 10 MiB on one line: refused by max_message and skipped, never held (the daemon's
        // peak memory grows by less than the line).
        let pid = proxy.daemon.process.processIdentifier
        let before = Self.peakKiB(pid)
        let huge = try Reader(proxy, "/live/huge?mb=10")
        #expect(huge.wait(timeout: 30) { _, ended in ended })
        let lines = Self.dataLines(huge.body.text)
        #expect(lines.count == 2 && lines[0].contains("longer than 1048576 bytes") && lines[1] == "{\"after\":1}", "\(huge.body.text.prefix(500))")
        let grew = Self.peakKiB(pid) - before
        #expect(grew < 6 << 10, "peak RSS grew \(grew) KiB")
        // 1 MB of nesting: refused by the serializer's depth bound, no crash, the next event served.
        let nested = try Reader(proxy, "/live/nested?depth=500000")
        #expect(nested.wait(timeout: 30) { _, ended in ended })
        let after = Self.dataLines(nested.body.text)
        #expect(after.count == 2 && after[0].contains("urn:serializerd:") && after[1] == "{\"after\":1}", "\(nested.body.text.prefix(500))")
    }

    /// The process's peak resident memory so far (VmHWM), KiB.
    static func peakKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty } ?? "") ?? 0
    }

    @Test func badStreamSettingsAreConfigErrors() throws {
        let run = try checkRoute("stream", "{ on_invalid: ignore }")
        #expect(run.status != 0 && run.stderrText.contains(":5:") && run.stderrText.contains("expected pass, error_event, drop or close, found 'ignore'"))
        let kinds = try checkRoute("stream", "{ bytes: [nonsense] }")
        #expect(kinds.status != 0 && kinds.stderrText.contains("expected a media type"))
    }
}
