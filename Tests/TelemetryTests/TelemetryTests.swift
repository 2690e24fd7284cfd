import Foundation
import Logging
import Telemetry
import Testing

func event(route: String = "api", status: Int = 200, outcome: String = "ok", id: String = "r1", duration: Double = 0.002,
           upstream: Double? = 0.0015, serialize: Double? = 0.0002, error: String? = nil) -> CompletionEvent {
    CompletionEvent(startedAt: 1_763_000_000.25, requestID: id, route: route, method: "GET", path: "/api/x", upstreamURL: "http://u/x",
                    status: status, upstreamStatus: status == 499 ? nil : status, contentType: "application/json", serializer: "json",
                    outcome: outcome, bytesIn: 35, bytesOut: 29, duration: duration, upstreamDuration: upstream,
                    serializeDuration: serialize, error: error, responseContentType: "application/json; charset=utf-8")
}

/// Captures what a LogOutput writes, through a real pipe.
final class CapturedOutput {
    let output: LogOutput
    private let readEnd: Int32

    /// `asJournal`: JOURNAL_STREAM names this pipe, as systemd names the journal's socket.
    init(asJournal: Bool = false) {
        var ends: [Int32] = [0, 0]
        _ = pipe(&ends)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        // F_SETPIPE_SZ: room for a whole burst, since the test reads only afterwards.
        _ = fcntl(ends[1], 1031, Int32(1 << 20))
        readEnd = ends[0]
        var info = stat()
        fstat(ends[1], &info)
        output = LogOutput(fd: ends[1], environment: asJournal ? ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"] : [:])
    }

    func lines() -> [String] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(readEnd, &chunk, chunk.count)
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

@Suite struct CompletionLogTests {
    @Test func jsonLinesCarryTheFieldsInOrderAndLeaveOnFlush() throws {
        let captured = CapturedOutput()
        let log = CompletionLog(output: captured.output)
        log.record(event())
        log.record(event(route: "(unmatched)", status: 404, outcome: "no_route", id: "r2", upstream: nil, serialize: nil, error: "No route \"x\""))
        #expect(captured.lines().isEmpty)   // buffered until the loop turn ends
        log.flush()
        let lines = captured.lines()
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix(#"{"ts":""#))
        #expect(lines[0].hasSuffix(#","level":"info","msg":"request_completed","request_id":"r1","route":"api","method":"GET","path":"/api/x","upstream_url":"http://u/x","status":200,"upstream_status":200,"content_type":"application/json","serializer":"json","outcome":"ok","bytes_in":35,"bytes_out":29,"duration_ms":2.000,"upstream_ms":1.500,"serialize_ms":0.200,"unsafe_numbers":null,"source":null,"cache":null,"http_version":null,"faults":null,"error":null}"#))
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["level"] as? String == "warning")
        #expect(second["error"] as? String == "No route \"x\"")
        #expect(second["upstream_ms"] is NSNull)
    }

    @Test func textFormatAndLevelsFollowTheSettings() {
        let captured = CapturedOutput()
        captured.output.configure(format: .text, level: .warning)
        let log = CompletionLog(output: captured.output)
        log.record(event())
        log.record(event(status: 502, outcome: "upstream_unavailable", id: "r3", error: "Failed to connect"))
        log.flush()
        let lines = captured.lines()
        #expect(lines.count == 1)
        #expect(lines[0].contains(" ERROR request_completed request_id=r3 route=api method=GET path=/api/x"))
        #expect(lines[0].contains(" outcome=upstream_unavailable "))
        #expect(lines[0].hasSuffix(#" error="Failed to connect""#))
    }

    @Test func theJournalGetsPriorityPrefixes() {
        let journal = CapturedOutput(asJournal: true)
        let log = CompletionLog(output: journal.output)
        log.record(event())
        log.record(event(status: 502, outcome: "upstream_unavailable", id: "r3"))
        log.flush()
        let lines = journal.lines()
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("<6>{\"ts\":") && lines[1].hasPrefix("<3>{\"ts\":"))
        // Anything else on stdout (a pipe, a terminal) gets plain lines.
        let plain = CapturedOutput(asJournal: false)
        let plainLog = CompletionLog(output: plain.output)
        plainLog.record(event(status: 502, outcome: "upstream_unavailable", id: "r4"))
        plainLog.flush()
        #expect(plain.lines().first?.hasPrefix("{\"ts\":") == true)
    }

    @Test func longBurstsAreWrittenInWholeLines() {
        let captured = CapturedOutput()
        let log = CompletionLog(output: captured.output)
        for index in 0..<300 { log.record(event(id: "burst-\(index)")) }
        log.flush()
        let lines = captured.lines()
        #expect(lines.count == 300)
        #expect(lines.allSatisfy { $0.hasPrefix("{\"ts\":") && $0.hasSuffix("}") })
        #expect(lines.last?.contains("\"request_id\":\"burst-299\"") == true)
    }

    @Test func swiftLogEventsUseTheSameLines() throws {
        let captured = CapturedOutput()
        let logger = Logger(label: "test") { LineLogHandler(label: $0, output: captured.output) }
        logger.notice("ready", metadata: ["listen": "127.0.0.1:1", "workers": .stringConvertible(2), "ok": .stringConvertible(true),
                                          "list": .array([.stringConvertible(1), "x"])])
        logger.debug("hidden")
        let lines = captured.lines()
        #expect(lines.count == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(doc["msg"] as? String == "ready" && doc["level"] as? String == "notice")
        #expect(doc["workers"] as? Int == 2 && doc["ok"] as? Bool == true)
        #expect(doc["list"] as? [Any] != nil)
        #expect(lines[0].contains(#""list":[1,"x"]"#))
    }
}

@Suite struct MetricsRegistryTests {
    @Test func workersMergeAndHistogramsAreCumulative() {
        let registry = MetricsRegistry(version: "9.9.9", startTime: 1_700_000_000.5)
        let first = registry.makeRecorder(), second = registry.makeRecorder()
        first.record(event(duration: 0.0003))
        first.record(event(duration: 0.003))
        second.record(event(duration: 20))
        second.record(event(route: "(unmatched)", status: 404, outcome: "no_route", upstream: nil, serialize: nil))
        second.setInflight(3)
        first.setInflight(1)
        registry.countReload(succeeded: false)
        let text = String(decoding: registry.render(), as: UTF8.self)
        #expect(text.contains("\nserializerd_requests_total{route=\"api\",method=\"GET\",code=\"200\",outcome=\"ok\"} 3\n"))
        #expect(text.contains("\nserializerd_requests_total{route=\"(unmatched)\",method=\"GET\",code=\"404\",outcome=\"no_route\"} 1\n"))
        #expect(text.contains("\nserializerd_request_duration_seconds_bucket{route=\"api\",le=\"0.0005\"} 1\n"))
        #expect(text.contains("\nserializerd_request_duration_seconds_bucket{route=\"api\",le=\"0.005\"} 2\n"))
        #expect(text.contains("\nserializerd_request_duration_seconds_bucket{route=\"api\",le=\"10\"} 2\n"))
        #expect(text.contains("\nserializerd_request_duration_seconds_bucket{route=\"api\",le=\"+Inf\"} 3\n"))
        #expect(text.contains("\nserializerd_request_duration_seconds_count{route=\"api\"} 3\n"))
        #expect(text.contains("\nserializerd_upstream_response_bytes_total{route=\"api\"} 105\n"))
        #expect(text.contains("\nserializerd_inflight_requests 4\n"))
        #expect(text.contains("\nserializerd_config_reloads_total{result=\"error\"} 1\n"))
        #expect(text.contains("\nserializerd_config_reloads_total{result=\"ok\"} 0\n"))
        #expect(text.contains("\nserializerd_build_info{version=\"9.9.9\"} 1\n"))
        #expect(text.contains("\nprocess_start_time_seconds 1700000000.5\n"))
        // No upstream histogram for a route that never reached an upstream.
        #expect(!text.contains("serializerd_upstream_duration_seconds_count{route=\"(unmatched)\"}"))
        // Every family once, HELP before TYPE.
        let helps = text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        #expect(Set(helps).count == helps.count)
        #expect(helps.contains("process_resident_memory_bytes") && helps.contains("process_open_fds"))
    }

    @Test func labelValuesAreEscaped() {
        let registry = MetricsRegistry(version: "a\"b\\c\nd", startTime: 0)
        let text = String(decoding: registry.render(), as: UTF8.self)
        #expect(text.contains(#"serializerd_build_info{version="a\"b\\c\nd"} 1"#))
    }
}

@Suite struct EventHubTests {
    @Test func theRingKeepsTheLastTwoHundredInOrder() {
        let hub = EventHub(metrics: MetricsRegistry(version: "x", startTime: 0))
        hub.publish((0..<150).map { event(id: "a\($0)") }, frames: nil)
        hub.publish((150..<260).map { event(id: "a\($0)") }, frames: nil)
        let recent = hub.recent()
        #expect(recent.count == EventHub.recentCapacity)
        #expect(recent.first?.requestID == "a60" && recent.last?.requestID == "a259")
    }

    @Test func aFullSubscriberQueueDropsAndCounts() {
        let registry = MetricsRegistry(version: "x", startTime: 0)
        let hub = EventHub(metrics: registry)
        let subscriber = hub.subscribe(owner: OwnerToken()) {}
        #expect(hub.hasSubscribers)
        let first = (0..<600).map { event(id: "b\($0)") }, second = (600..<1_500).map { event(id: "b\($0)") }
        // A wake-up is due only when the queue goes from empty to non-empty.
        #expect(hub.publish(first, frames: EventFrames(first)).map(ObjectIdentifier.init) == [ObjectIdentifier(subscriber)])
        #expect(hub.publish(second, frames: EventFrames(second)).isEmpty)
        let hundred = EventFrames(Array(first[..<100])).bytes
        let (bytes, events, dropped) = subscriber.take(maxBytes: hundred.count)
        #expect(events == 100 && bytes == hundred)
        #expect(dropped == 500)
        // One frame even when none fits: a stream never stalls on a large one.
        let (one, oneCount, _) = subscriber.take(maxBytes: 0)
        #expect(oneCount == 1 && one == EventFrames([first[100]]).bytes)
        let (rest, restCount, droppedAfter) = subscriber.take(maxBytes: .max)
        #expect(restCount == EventHub.subscriberQueueLimit - 101 && droppedAfter == 0)
        #expect(rest == EventFrames(Array(first[101...]) + Array(second[..<400])).bytes)
        #expect(subscriber.take(maxBytes: .max).events == 0)
        let text = String(decoding: registry.render(), as: UTF8.self)
        #expect(text.contains("\nserializerd_event_drops_total 500\n"))
        #expect(text.contains("\nserializerd_event_subscribers 1\n"))
        hub.unsubscribe(subscriber)
        hub.unsubscribe(subscriber)   // twice is harmless
        #expect(!hub.hasSubscribers)
        #expect(String(decoding: registry.render(), as: UTF8.self).contains("\nserializerd_event_subscribers 0\n"))
    }

    /// Takes of any size, across and within a worker's batches, add up to the frames in
    /// order: each frame is `event`, `id` and the event's JSON as the log has it.
    @Test func takesCutOnlyBetweenFrames() throws {
        let hub = EventHub(metrics: MetricsRegistry(version: "x", startTime: 0))
        let subscriber = hub.subscribe(owner: OwnerToken()) {}
        let batches = [(0..<7), (7..<8), (8..<30)].map { $0.map { event(id: "c\($0)", error: $0 % 3 == 0 ? "bad \"x\"\n" : nil) } }
        for batch in batches { hub.publish(batch, frames: EventFrames(batch)) }
        var joined: [UInt8] = [], total = 0
        for size in [1, 700, 333, 2_000, 90, 5_000, 10_000, .max] {
            let (bytes, events, _) = subscriber.take(maxBytes: size)
            joined += bytes
            total += events
        }
        #expect(total == 30)
        let text = String(decoding: joined, as: UTF8.self)
        let frames = text.components(separatedBy: "\n\n").dropLast()
        #expect(frames.count == 30)
        for (i, frame) in frames.enumerated() {
            let lines = frame.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3 && lines[0] == "event: request_completed" && lines[1] == "id: c\(i)")
            let data = try #require(lines.last?.dropFirst("data: ".count))
            #expect(Array(data.utf8) == event(id: "c\(i)", error: i % 3 == 0 ? "bad \"x\"\n" : nil).json)
        }
        hub.unsubscribe(subscriber)
    }
}


@Suite struct HARTests {
    @Test func entriesHaveTheRequiredMembersAndConsistentTimings() throws {
        let bytes = HAR.render([event(), event(status: 499, outcome: "client_gone", id: "r2", upstream: nil, serialize: nil)],
                               origin: "http://127.0.0.1:8080", version: "1.0")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let log = try #require(doc["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        let first = entries[0]
        #expect(first["startedDateTime"] as? String == "2025-11-13T02:13:20.250Z")
        #expect((first["request"] as? [String: Any])?["url"] as? String == "http://127.0.0.1:8080/api/x")
        let timings = try #require(first["timings"] as? [String: Double])
        #expect(timings["wait"] == 1.5 && timings["receive"] == 0.2 && timings["send"] == 0.3)
        #expect(first["time"] as? Double == 2)
        let gone = try #require(entries[1]["response"] as? [String: Any])
        #expect(gone["status"] as? Int == 499 && gone["statusText"] as? String != nil)
    }
}
