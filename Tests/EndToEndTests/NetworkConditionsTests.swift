import Foundation
import TestSupport
import Testing

/// Network conditions seen from real clients: the delay before the first byte and the
/// pace of every byte, on fresh and keep-alive connections; each fault's effect through
/// curl; seeded fault sequences. Bounds are loose on the slow side (a shared machine);
/// BENCHMARKS.md reports the accuracy measured by `bench/network-shaping.py`.
@Suite struct NetworkConditionsTests {
    static let routes = [
        route("lag", prefix: "/lag/", extra: "    network: { latency: 200ms }\n"),
        route("thin", prefix: "/thin/", extra: "    network: { down: 200KiB }\n"),
        route("ctl", prefix: "/ctl/", extra: "    timeout: 1s\n    network: { header_control: true }\n"),
        route("upload", prefix: "/up/", extra: "    network: { up: 40KiB }\n"),
    ].joined()

    static func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = Date()
        let value = try body()
        return (value, Date().timeIntervalSince(start))
    }

    @Test func latencyComesBeforeEveryReplyOnAKeptConnection() throws {
        let proxy = try ProxyHarness(routes: Self.routes, workers: 1)
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        for _ in 0..<3 {
            let (reply, seconds) = try Self.timed { () throws -> RawResponse in
                connection.send("GET /lag/json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                return try connection.response(timeout: 5)
            }
            #expect(reply.status == 200)
            #expect(reply.header("Serializerd-Fault-Applied") == "latency=200ms")
            #expect(seconds >= 0.2 && seconds < 1.5, "\(seconds)")
        }
        // A route without conditions answers at once, on the same worker.
        let (plain, seconds) = try Self.timed { try proxy.get("/ctl/json") }
        #expect(plain.status == 200 && plain.header("Serializerd-Fault-Applied") == nil)
        #expect(seconds < 0.2, "\(seconds)")
    }

    @Test func theRatePacesEveryByteOnFreshAndKeptConnections() throws {
        let proxy = try ProxyHarness(routes: Self.routes, workers: 1)
        defer { proxy.finish() }
        // 150,000 bytes at 200 KiB/s: 0.73 s, less the first 4 KiB step.
        let fresh = try Self.timed { try proxy.get("/thin/big?bytes=150000") }
        #expect(fresh.0.status == 200 && fresh.0.body.count == 150_002)
        #expect(fresh.1 >= 0.68 && fresh.1 < 3, "\(fresh.1)")
        let connection = try RawConnection(port: proxy.port)
        for _ in 0..<2 {
            let kept = try Self.timed { () throws -> RawResponse in
                connection.send("GET /thin/big?bytes=150000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                return try connection.response(timeout: 10)
            }
            #expect(kept.0.body.count == 150_002)
            #expect(kept.1 >= 0.68 && kept.1 < 3, "\(kept.1)")
        }
    }

    @Test func theBodyIsReadAtTheUploadPace() throws {
        let proxy = try ProxyHarness(routes: Self.routes, workers: 1)
        defer { proxy.finish() }
        let body = Array(repeating: UInt8(ascii: "a"), count: 60_000)
        // 60,000 bytes at 40 KiB/s: 1.46 s before the upstream sees the request.
        let (reply, seconds) = try Self.timed {
            try proxy.get("/up/echo", method: "POST", headers: [("Content-Type", "text/plain")], body: body)
        }
        #expect(reply.status == 200 && reply.header("Serializerd-Fault-Applied") == "up=40960")
        #expect((proxy.json(reply)?["body"] as? String)?.utf8.count == 60_000)
        #expect(seconds >= 1.35 && seconds < 5, "\(seconds)")
        // An admin client asks for its own pace on a route with header control.
        let (asked, fast) = try Self.timed {
            try proxy.get("/ctl/echo", method: "POST", headers: [("Serializerd-Fault", "up=1MiB")], body: body)
        }
        #expect(asked.status == 200 && asked.header("Serializerd-Fault-Applied") == "up=1048576")
        #expect(fast < 1, "\(fast)")
        let (_, slow) = try Self.timed {
            try proxy.get("/ctl/echo", method: "POST", headers: [("Serializerd-Fault", "up=100KiB")], body: body)
        }
        #expect(slow >= 0.55, "\(slow)")
        // A request without a body is not held.
        let (_, none) = try Self.timed { try proxy.get("/up/json") }
        #expect(none < 0.5, "\(none)")
    }

    static func shaped(_ proxy: ProxyHarness) -> Int? {
        (try? proxy.get("/-/network")).flatMap { proxy.json($0)?["shaped_replies"] as? Int }
    }

    static func poll(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return false
    }

    @Test func aReplyAtOneBytePerSecondHoldsOnlyItsOwnBytes() throws {
        let proxy = try ProxyHarness(routes: Self.routes, workers: 1)
        defer { proxy.finish() }
        do {
            let slow = try RawConnection(port: proxy.port)
            slow.send("GET /ctl/big?bytes=1000000 HTTP/1.1\r\nHost: 127.0.0.1\r\nSerializerd-Fault: down=1\r\n\r\n")
            #expect(Self.poll { Self.shaped(proxy) == 1 })
            let buffered = Metrics(try proxy.get("/metrics").text)["serializerd_buffered_bytes"] ?? 0
            #expect(buffered >= 1_000_000 && buffered < 1_100_000, "\(buffered)")
            // The worker that paces it answers everyone else at once.
            let (other, seconds) = try Self.timed { try proxy.get("/ctl/json") }
            #expect(other.status == 200 && seconds < 0.5, "\(seconds)")
            #expect(slow.read(timeout: 0.5) { !$0.isEmpty }.count < 64)
        }
        // The client has left (its socket closed with the scope): its bytes go with it.
        #expect(Self.poll { Self.shaped(proxy) == 0 })
        #expect(Self.poll { (Metrics((try? proxy.get("/metrics").text) ?? "")["serializerd_buffered_bytes"] ?? 1e9) < 10_000 })
    }

    @Test func pastMaxActiveFaultsRepliesGoUnshaped() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "limits: { max_active_faults: 1 }\n", workers: 1)
        defer { proxy.finish() }
        let held = try RawConnection(port: proxy.port)
        held.send("GET /ctl/json HTTP/1.1\r\nHost: 127.0.0.1\r\nSerializerd-Fault: latency=5s\r\n\r\n")
        #expect(Self.poll { Self.shaped(proxy) == 1 })
        let (second, seconds) = try Self.timed { try proxy.get("/ctl/json", headers: [("Serializerd-Fault", "latency=5s; status=503")]) }
        // Its fault still applies; its latency does not.
        #expect(second.status == 503 && second.header("Serializerd-Fault-Applied") == "status=503")
        #expect(seconds < 1, "\(seconds)")
    }

    @Test func aRuntimeChangeGoesThroughTheDaemonAndAHugeBodyIsRefused() throws {
        let proxy = try ProxyHarness(routes: Self.routes, workers: 2)
        defer { proxy.finish() }
        let change = Array(#"{"route": "ctl", "network": {"fail_rate": 1, "faults": [{"status": 429}]}, "expires": "1m"}"#.utf8)
        #expect(try proxy.get("/-/network", method: "PUT", headers: [("Content-Type", "application/json")], body: change).status == 200)
        // Every worker sees it.
        #expect(try (0..<6).map { _ in try proxy.get("/ctl/json").status } == Array(repeating: 429, count: 6))
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 2 << 20)
        let refused = try proxy.get("/-/network", method: "PUT", body: huge)
        #expect(refused.status == 413 && (proxy.json(refused)?["type"] as? String)?.hasSuffix("request-too-large") == true)
        #expect(try proxy.get("/-/network", method: "DELETE").status == 200)
        #expect(try proxy.get("/ctl/json").status == 200)
    }

    static func curl(_ port: Int, _ path: String, fault: String) throws -> (CommandResult, Double) {
        try timed {
            try ServerBinary.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-H", "Serializerd-Fault: \(fault)",
                                  "http://127.0.0.1:\(port)\(path)"], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        }
    }

    @Test func eachFaultReachesCurlAsARealFailure() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        // CURLE_RECV_ERROR: the connection was reset.
        let reset = try Self.curl(proxy.port, "/ctl/json", fault: "reset").0
        #expect(reset.status == 56, "\(reset.status) \(reset.stdoutText)")
        // CURLE_PARTIAL_FILE: the body ended before its Content-Length.
        let cut = try Self.curl(proxy.port, "/ctl/big?bytes=100000", fault: "truncate").0
        #expect(cut.status == 18, "\(cut.status)")
        #expect(cut.stdoutText == "200")
        // The route's timeout (1 s), then upstream-timeout.
        let (timeout, seconds) = try Self.curl(proxy.port, "/ctl/json", fault: "timeout")
        #expect(timeout.status == 0 && timeout.stdoutText == "504")
        #expect(seconds >= 1 && seconds < 5, "\(seconds)")
        let status = try Self.curl(proxy.port, "/ctl/json", fault: "status=503; latency=50ms").0
        #expect(status.status == 0 && status.stdoutText == "503")
        // The daemon is unharmed and counted each.
        #expect(try proxy.get("/ctl/json").status == 200)
        let metrics = Metrics(try proxy.get("/metrics").text)
        for fault in ["reset", "truncate", "timeout", "status", "latency"] {
            #expect(metrics[#"serializerd_faults_total{route="ctl",fault="\#(fault)"}"#] == 1, "\(fault): \(metrics)")
        }
    }

    static let xml = "<r><item><id>1</id></item><item><id>2</id></item><n>5</n></r>"
    static let plist = #"<?xml version="1.0"?><plist version="1.0"><dict><key>id</key><integer>7</integer><key>tags</key><array><string>x</string></array></dict></plist>"#
    static let json = #"{"user":{"id":7,"tags":["x"]},"n":1}"#

    /// Each operation on each kind of answer: (format, operation, what the client gets).
    static let chaosCases: [(String, String, String)] = [
        ("json", "drop=/user/id", #"{"user":{"tags":["x"]},"n":1}"#),
        ("json", "null=/n", #"{"user":{"id":7,"tags":["x"]},"n":null}"#),
        ("json", "string=/user/id", #"{"user":{"id":"7","tags":["x"]},"n":1}"#),
        ("json", "singleton=/user/tags", #"{"user":{"id":7,"tags":"x"},"n":1}"#),
        ("xml", "drop=/r/n", #"{"r":{"item":[{"id":"1"},{"id":"2"}]}}"#),
        ("xml", "null=/r/n", #"{"r":{"item":[{"id":"1"},{"id":"2"}],"n":null}}"#),
        ("xml", "singleton=/r/item", #"{"r":{"item":{"id":"1"},"n":"5"}}"#),
        ("plist", "drop=/id", #"{"tags":["x"]}"#),
        ("plist", "string=/id", #"{"id":"7","tags":["x"]}"#),
        ("plist", "singleton=/tags", #"{"id":7,"tags":"x"}"#),
    ]

    @Test func chaosReachesEachSerializerAsARealUpstreamWould() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chaos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = ["json": (Self.json, "application/json"), "xml": (Self.xml, "application/xml"), "plist": (Self.plist, "application/x-plist")]
        for (name, (body, _)) in files { try body.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let routes = [
            route("cj", prefix: "/json/", extra: "    network: { header_control: true }\n"),
            route("cx", prefix: "/xml/", extra: "    response: { serializer: xml }\n    network: { header_control: true }\n"),
            route("cp", prefix: "/plist/", extra: "    response: { serializer: plist }\n    network: { header_control: true }\n"),
        ].joined()
        let proxy = try ProxyHarness(routes: routes)
        defer { proxy.finish() }
        func ask(_ format: String, _ chaos: String) throws -> RawResponse {
            let (_, type) = files[format]!
            let path = dir.appendingPathComponent(format).path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            return try proxy.get("/\(format)/file?path=\(path)&type=\(type)", headers: [("Serializerd-Chaos", chaos)])
        }
        for (format, operation, expected) in Self.chaosCases {
            let reply = try ask(format, operation)
            #expect(reply.status == 200 && reply.text == expected, "\(format) \(operation): \(reply.status) \(reply.text)")
            #expect(reply.header("Serializerd-Fault-Applied") == operation)
        }
        // What cannot be done to an answer is not done, and not reported.
        for (format, operation) in [("xml", "string=/r/n"), ("plist", "null=/id"), ("json", "drop=/nothing")] {
            let reply = try ask(format, operation)
            #expect(reply.status == 200 && reply.header("Serializerd-Fault-Applied") == nil, "\(format) \(operation)")
        }
        // The answer is no longer what the serializer accepts: its real failure, every format.
        for format in ["json", "xml", "plist"] {
            for operation in ["html_200", "content_type=text/plain"] {
                let reply = try ask(format, operation)
                #expect(reply.status == 502, "\(format) \(operation)")
                #expect((proxy.json(reply)?["type"] as? String)?.hasSuffix("unacceptable-content-type") == true, "\(reply.text)")
                #expect(reply.header("Serializerd-Fault-Applied") == operation)
            }
        }
    }

    @Test func aSeededRouteFailsTheSameRequestsEveryRun() throws {
        let seeded = route("dice", prefix: "/d/", extra: "    network: { fail_rate: 0.3, faults: [{status: 503}, {status: 429}], seed: 7 }\n")
        func run() throws -> [Int] {
            let proxy = try ProxyHarness(routes: seeded, workers: 1)
            defer { proxy.finish() }
            return try (0..<20).map { _ in try proxy.get("/d/json").status }
        }
        let first = try run()
        #expect(first == (try run()))
        #expect(first.contains(200) && first.contains { $0 != 200 })
    }

    @Test(arguments: [
        ("{ profile: 5g }", ":5:25", "unknown profile '5g' (slow-3g, fast-3g, 3g, edge, lossy-wifi)"),
        ("{ fail_rate: 2, faults: [reset] }", ":5:27", "expected a rate from 0 to 1, found '2'"),
        ("{ fail_rate: 0.1 }", ":5:27", "fail_rate needs faults to choose from"),
        ("{ faults: [explode] }", ":5:25", "unknown fault 'explode'"),
        ("{ faults: [{status: 200}] }", ":5:34", "expected an integer from 400 to 599"),
        ("{ chaos: [\"drop=a\"] }", ":5:24", "'a' is not a JSON pointer"),
        ("{ latency: fast }", ":5:25", "expected a positive duration"),
        ("{ warp: 9 }", ":5:16", "warp"),
    ])
    func aBadSettingIsAConfigError(value: String, position: String, message: String) throws {
        let run = try checkRoute("network", value)
        #expect(run.status != 0)
        #expect(run.stderrText.contains(position) && run.stderrText.contains(message), "\(run.stderrText)")
    }
}
