import Foundation
import Testing
import TestSupport

/// The collector the tests export to: Tests/Fixtures/otlp_receiver.py, which reads every
/// body with opentelemetry-proto's ExportTraceServiceRequest (protobuf's strict JSON
/// parser) and keeps the spans it read.
final class OTLPReceiver {
    let process: Spawned
    let port: Int

    /// `slow`: each POST is answered only after that many seconds.
    init(slow: Double? = nil) throws {
        let python = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".venv-otlp/bin/python")
        process = try Spawned(python, ["-u", Fixture.path("otlp_receiver.py")] + (slow.map { ["--slow", String($0)] } ?? []))
        guard let line = process.waitForLine({ Int($0) != nil }), let port = Int(line) else {
            process.stop()
            throw TestFailure("the OTLP receiver did not start (make test-deps makes .venv-otlp)")
        }
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)/v1/traces" }

    /// What it has read so far: the spans, and the bodies it could not read.
    func read() throws -> (spans: [[String: Any]], errors: [String]) {
        let doc = try JSONSerialization.jsonObject(with: Data(RawHTTP.request(port: port, target: "/spans").body)) as? [String: Any]
        return (doc?["spans"] as? [[String: Any]] ?? [], doc?["errors"] as? [String] ?? [])
    }

    /// Polls until `done` holds for the spans read (or the deadline passes); the last read.
    func wait(timeout: Double = 15, until done: ([[String: Any]]) -> Bool) throws -> (spans: [[String: Any]], errors: [String]) {
        let deadline = Date().addingTimeInterval(timeout)
        var last = try read()
        while !done(last.spans), Date() < deadline {
            usleep(50_000)
            last = try read()
        }
        return last
    }
}

@Suite struct TracingTests {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let clientSpan = "00f067aa0ba902b7"

    static func attributes(_ span: [String: Any]) -> [String: Any] { span["attributes"] as? [String: Any] ?? [:] }
    static func int(_ any: Any?) -> Int? { (any as? NSNumber)?.intValue ?? (any as? String).flatMap { Int($0) } }
    static func u64(_ any: Any?) -> UInt64 { (any as? NSNumber)?.uint64Value ?? (any as? String).flatMap { UInt64($0) } ?? 0 }

    /// A route with a cache, a recording tape, retries and a contract: one request the
    /// upstream fails once, with the client's sampled traceparent and tracestate.
    @Test(.timeLimit(.minutes(5))) func everyStageIsAChildOfTheServerSpanInTheClientsTrace() throws {
        let receiver = try OTLPReceiver()
        defer { receiver.process.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        let schema = dir.appendingPathComponent("ok.json").path
        try #"{"type": "object", "required": ["ok"]}"#.write(toFile: schema, atomically: true, encoding: .utf8)
        let extra = "    cache: {}\n    tape: { mode: record }\n    retry: { backoff: 10ms }\n    contract: { schema: \(schema) }\n"
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: extra),
                                     top: "tracing: { otlp: \(receiver.url), sample: 0, service_name: edge-test }\ntapes: { dir: \(dir.path) }\n")
        defer { proxy.finish() }
        let reply = try proxy.get("/api/flaky?fail=1&key=traced&token=secret",
                                  headers: [("traceparent", "00-\(Self.traceID)-\(Self.clientSpan)-01"), ("tracestate", "vendor=1")])
        #expect(reply.status == 200, "\(reply.text)")
        // Not sampled (sample: 0, no traceparent): no spans, but the upstream still sees one.
        #expect(try proxy.get("/api/flaky?fail=0&key=untraced").status == 200)

        let (spans, errors) = try receiver.wait { spans in
            spans.contains { $0["kind"] as? Int == 2 } && spans.filter { $0["kind"] as? Int == 3 }.count >= 2
                && spans.contains { $0["name"] as? String == "contract" }
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(spans.allSatisfy { $0["traceId"] as? String == Self.traceID }, "another trace was exported")
        let servers = spans.filter { $0["kind"] as? Int == 2 }
        try #require(servers.count == 1, "\(spans)")
        let server = servers[0]
        let serverID = server["spanId"] as? String ?? ""
        #expect(server["parentSpanId"] as? String == Self.clientSpan && server["traceState"] as? String == "vendor=1")
        #expect(server["name"] as? String == "GET api" && server["service"] as? String == "edge-test")
        let a = Self.attributes(server)
        #expect(a["http.request.method"] as? String == "GET" && a["url.path"] as? String == "/api/flaky" && a["http.route"] as? String == "api")
        #expect(Self.int(a["http.response.status_code"]) == 200 && a["serializerd.outcome"] as? String == "ok"
            && a["serializerd.source"] as? String == "upstream")
        // capture.redact_query holds for the span too.
        let query = a["url.query"] as? String ?? ""
        #expect(query.contains("fail=1") && !query.contains("secret") && !query.contains("traced"), "\(query)")
        let events = (server["events"] as? [[String: Any]] ?? []).map { $0["name"] as? String ?? "" }
        #expect(events.contains("retry"), "\(events)")

        let children = spans.filter { $0["spanId"] as? String != serverID }
        #expect(children.allSatisfy { $0["parentSpanId"] as? String == serverID }, "children of each other")
        let names = children.map { $0["name"] as? String ?? "" }
        for stage in ["cache", "tape", "serialize", "contract"] { #expect(names.filter { $0 == stage }.count == 1, "\(stage) in \(names)") }
        let attempts = children.filter { $0["kind"] as? Int == 3 }.sorted { Self.u64($0["start"]) < Self.u64($1["start"]) }
        try #require(attempts.count == 2, "\(names)")
        let failed = Self.attributes(attempts[0]), answered = Self.attributes(attempts[1])
        #expect(Self.int(failed["http.response.status_code"]) == 503 && failed["error.type"] as? String == "503")
        #expect((attempts[0]["status"] as? [String: Any])?["code"] as? Int == 2)
        #expect(Self.int(answered["http.response.status_code"]) == 200 && answered["server.address"] as? String == "127.0.0.1"
            && Self.int(answered["server.port"]) == proxy.stubPort && answered["network.protocol.version"] as? String == "1.1")
        #expect(Self.attributes(children.first { $0["name"] as? String == "cache" } ?? [:])["serializerd.cache"] as? String == "miss")
        #expect(Self.attributes(children.first { $0["name"] as? String == "serialize" } ?? [:])["serializerd.serializer"] as? String == "json")

        // Ids: 16 and 8 bytes, none zero, none twice; times: start ≤ end, children inside.
        let zero16 = String(repeating: "0", count: 32), zero8 = String(repeating: "0", count: 16)
        #expect(spans.allSatisfy { Self.int($0["traceIdBytes"]) == 16 && Self.int($0["spanIdBytes"]) == 8 && $0["traceId"] as? String != zero16 && $0["spanId"] as? String != zero8 })
        #expect(Set(spans.compactMap { $0["spanId"] as? String }).count == spans.count)
        let (start, end) = (Self.u64(server["start"]), Self.u64(server["end"]))
        #expect(start > 1_600_000_000_000_000_000 && start <= end)
        for child in children {
            let (s, e) = (Self.u64(child["start"]), Self.u64(child["end"]))
            #expect(start <= s && s <= e && e <= end, "\(child["name"] ?? "") \(s)…\(e) outside \(start)…\(end)")
        }

        // Each attempt carried a traceparent naming its own span; the unsampled request too.
        let stats = proxy.json(try RawHTTP.request(port: proxy.stubPort, target: "/v1/flakystats?key=traced"))
        let sent = stats?["traceparents"] as? [String] ?? []
        #expect(sent == attempts.map { "00-\(Self.traceID)-\($0["spanId"] as? String ?? "")-01" }, "\(sent)")
        let untraced = proxy.json(try RawHTTP.request(port: proxy.stubPort, target: "/v1/flakystats?key=untraced"))?["traceparents"] as? [String] ?? []
        #expect(untraced.count == 1 && untraced[0].hasPrefix("00-") && untraced[0].hasSuffix("-00") && !untraced[0].contains(Self.traceID), "\(untraced)")
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect((metrics["serializerd_spans_exported_total"] ?? 0) >= Double(spans.count))
    }

    /// A stored answer's trace: the cache span says hit, and no upstream span.
    @Test func aCacheHitHasNoUpstreamSpan() throws {
        let receiver = try OTLPReceiver()
        defer { receiver.process.stop() }
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    cache: {}\n"), top: "tracing: { otlp: \(receiver.url) }\n")
        defer { proxy.finish() }
        #expect(try proxy.get("/api/json").status == 200)
        #expect(try proxy.get("/api/json").status == 200)
        let (spans, _) = try receiver.wait { spans in spans.filter { $0["kind"] as? Int == 2 }.count >= 2 && spans.filter { $0["name"] as? String == "cache" }.count >= 2 }
        let hits = spans.filter { $0["name"] as? String == "cache" && Self.attributes($0)["serializerd.cache"] as? String == "hit" }
        try #require(hits.count == 1, "\(spans.map { ($0["name"] as? String ?? "", Self.attributes($0)["serializerd.cache"] as? String ?? "-") })")
        let trace = hits[0]["traceId"] as? String
        let inTrace = spans.filter { $0["traceId"] as? String == trace }
        #expect(!inTrace.contains { $0["kind"] as? Int == 3 })
        #expect(Self.attributes(inTrace.first { $0["kind"] as? Int == 2 } ?? [:])["serializerd.source"] as? String == "cache")
    }

    /// Events on the SERVER span: a fault the network conditions applied, a stored answer
    /// standing in for the upstream's 503; and a stream's spans last as long as it does.
    @Test(.timeLimit(.minutes(5))) func faultsStaleAnswersAndStreamsInTheirSpans() throws {
        let receiver = try OTLPReceiver()
        defer { receiver.process.stop() }
        let extra = "    cache: { stale_if_error: 60s }\n    network: { header_control: true }\n"
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: extra), top: "tracing: { otlp: \(receiver.url) }\n")
        defer { proxy.finish() }
        let key = "trace-\(UUID().uuidString.prefix(8))"
        #expect(try proxy.get("/api/cached/\(key)?cc=max-age=0").status == 200)
        #expect(try RawHTTP.request(port: proxy.stubPort, target: "/v1/cachemode/\(key)?mode=503").status == 200)
        let stale = try proxy.get("/api/cached/\(key)?cc=max-age=0", headers: [("X-Request-Id", "stale-one")])
        #expect(stale.status == 200 && stale.header("Cache-Status")?.contains("fwd=stale") == true)
        let faulted = try proxy.get("/api/json", headers: [("Serializerd-Fault", "latency=10ms"), ("X-Request-Id", "faulted-one")])
        #expect(faulted.status == 200)
        let streamed = try proxy.get("/api/sse?n=4", headers: [("X-Request-Id", "streamed-one")])
        #expect(streamed.status == 200 && streamed.text.contains("tick"))

        func server(_ id: String, in spans: [[String: Any]]) -> [String: Any]? {
            spans.first { $0["kind"] as? Int == 2 && Self.attributes($0)["serializerd.request_id"] as? String == id }
        }
        let (spans, errors) = try receiver.wait { spans in
            ["stale-one", "faulted-one", "streamed-one"].allSatisfy { server($0, in: spans) != nil }
        }
        #expect(errors.isEmpty, "\(errors)")
        func events(_ span: [String: Any]?) -> [[String: Any]] { span?["events"] as? [[String: Any]] ?? [] }
        let staleEvent = events(server("stale-one", in: spans)).first { $0["name"] as? String == "stale" }
        #expect((staleEvent?["attributes"] as? [String: Any])?["serializerd.stale.reason"] as? String == "error", "\(events(server("stale-one", in: spans)))")
        #expect(Self.int((staleEvent?["attributes"] as? [String: Any])?["http.response.status_code"]) == 503)
        let faultEvent = events(server("faulted-one", in: spans)).first { $0["name"] as? String == "fault" }
        #expect(((faultEvent?["attributes"] as? [String: Any])?["serializerd.faults"] as? String)?.contains("latency=10ms") == true)
        // Four events 50 ms apart: the stream's SERVER span and its upstream span cover them.
        let stream = try #require(server("streamed-one", in: spans))
        let upstream = spans.first { $0["kind"] as? Int == 3 && $0["parentSpanId"] as? String == stream["spanId"] as? String }
        let streamSeconds = Double(Self.u64(stream["end"]) - Self.u64(stream["start"])) / 1e9
        let upstreamSeconds = Double(Self.u64(upstream?["end"]) &- Self.u64(upstream?["start"])) / 1e9
        #expect(streamSeconds >= 0.15 && upstreamSeconds >= 0.15 && upstreamSeconds <= streamSeconds, "\(streamSeconds) \(upstreamSeconds)")
    }

    /// A collector that refuses connections, or one that holds each batch for 3 s: every
    /// request is answered as without tracing, nothing is exported, and the daemon stops
    /// promptly; the refused batches' spans are dropped and counted (a hanging collector's
    /// once its 10 s are up, which the exporter's own tests show).
    @Test(.timeLimit(.minutes(5)), arguments: [nil, 3.0]) func aCollectorDownOrHangingCostsTheRequestsNothing(slow: Double?) throws {
        let receiver = try slow.map { try OTLPReceiver(slow: $0) }
        defer { receiver?.process.stop() }
        let url = receiver?.url ?? "http://127.0.0.1:9/v1/traces"
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/"), top: "tracing: { otlp: \(url) }\n")
        let requests = 30
        for k in 0..<requests {
            let reply = try proxy.get("/api/json?n=\(k)", headers: [("traceparent", "00-\(Self.traceID)-\(Self.clientSpan)-01")])
            #expect(reply.status == 200)
        }
        if receiver == nil {
            // Each request: the server span, its upstream attempt, its serialization.
            let deadline = Date().addingTimeInterval(15)
            var dropped = 0.0
            while Date() < deadline {
                dropped = Metrics(try proxy.get("/metrics").text)["serializerd_spans_dropped_total"] ?? 0
                if dropped >= Double(requests * 3) { break }
                usleep(100_000)
            }
            let spanLines = try proxy.get("/metrics").text.split(separator: "\n").filter { $0.hasPrefix("serializerd_spans") || $0.contains("requests_total") }
            #expect(dropped == Double(requests * 3), "\(spanLines)")
        }
        #expect(Metrics(try proxy.get("/metrics").text)["serializerd_spans_exported_total"] == 0)
        #expect(try receiver?.read().spans.isEmpty ?? true)
        let stopping = Date()
        #expect(proxy.finish() == 0)
        #expect(Date().timeIntervalSince(stopping) < 8, "stopping waited for the collector")
    }

    @Test func badTracingSettingsAreConfigErrorsWithTheirPosition() throws {
        let cases = [
            ("{ otlp: ftp://127.0.0.1/v1/traces }", "3:18: error: tracing.otlp: expected the collector's OTLP/HTTP traces URL"),
            ("{ otlp: http://127.0.0.1:4318/v1/traces, sample: 1.5 }", "tracing.sample: expected a fraction of requests from 0 to 1"),
            ("{ sample: 0.5 }", "tracing: missing required key 'otlp'"),
            ("{ otlp: http://127.0.0.1:4318/v1/traces, colour: red }", "tracing.colour: unknown key"),
        ]
        for (value, message) in cases {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).yaml").path
            defer { try? FileManager.default.removeItem(atPath: file) }
            try "listen: 127.0.0.1:0\nworkers: 1\ntracing: \(value)\nroutes:\n  - name: api\n    match: { prefix: /api/ }\n    upstream: http://127.0.0.1:9/\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            let result = try ServerBinary.run(["check", file])
            let output = result.stdoutText + result.stderrText
            #expect(result.status != 0 && output.contains(message), "\(value): \(output)")
        }
    }
}
