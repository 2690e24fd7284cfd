import Foundation
import TestSupport
import Testing

/// WebSockets relayed through the daemon (DESIGN §9) to a WebSocket upstream written by
/// hand (Tests/Fixtures/ws_upstream.py), over TCP and TLS.
@Suite(.timeLimit(.minutes(5)))
struct WebSocketTests {
    static func harness(_ websocket: String = "", extra: String = "", arguments: [String] = [], scheme: String = "http") throws -> ProxyHarness {
        let routes = "  - name: ws\n    match: { prefix: /ws/ }\n    upstream: {stub}\n"
            + (websocket.isEmpty ? "" : "    websocket: \(websocket)\n") + extra
        return try ProxyHarness(routes: routes, script: "ws_upstream.py", arguments: arguments, scheme: scheme)
    }

    @Test func echoRelaysEachKindOfFrameAndTheCloseHandshake() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let ws = try WSClient(proxy.port, "/ws/echo", extra: "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, x-other\r\n")
        #expect(ws.head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), "\(ws.head)")
        #expect(ws.header("Sec-WebSocket-Accept") == WSClient.accept(ws.key), "\(ws.head)")
        #expect(ws.header("Upgrade")?.lowercased() == "websocket" && ws.header("X-Request-Id") != nil)
        ws.send(opcode: 1, Array("héllo".utf8))
        #expect(ws.next()?.text == "héllo")
        ws.send(opcode: 2, [0, 1, 2, 255])
        #expect(ws.next().map { $0.opcode == 2 && $0.payload == [0, 1, 2, 255] } == true)
        ws.send(opcode: 9, Array("ping".utf8))
        #expect(ws.next().map { $0.opcode == 10 && $0.text == "ping" } == true)
        // A message in three fragments reaches the upstream whole.
        ws.send(opcode: 1, Array("ab".utf8), fin: false)
        ws.send(opcode: 0, Array("cd".utf8), fin: false)
        ws.send(opcode: 0, Array("ef".utf8))
        #expect(ws.next()?.text == "abcdef")
        ws.send(opcode: 8, [0x03, 0xE8])
        #expect(ws.next().map { $0.opcode == 8 && $0.closeCode == 1000 } == true)
        #expect(ws.connection.waitForClose())
        // The upstream was offered no permessage-deflate, and saw the client's close.
        let headers = proxy.stub.waitForLine { $0.hasPrefix("headers ") } ?? ""
        #expect(headers.contains("\"sec-websocket-extensions\": \"x-other\"") && !headers.contains("deflate"), "\(headers)")
        #expect(proxy.stub.waitForLine { $0 == "closed echo code=1000" } != nil)
        let event = proxy.daemon.waitForLine { $0.contains("\"kind\":\"websocket\"") } ?? ""
        #expect(event.contains("\"status\":101") && event.contains("\"outcome\":\"ok\"")
                && event.contains("\"messages_to_client\":3,\"messages_to_upstream\":3") && event.contains("\"close_code\":1000"), "\(event)")
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_websocket_messages_total{route=\"ws\",direction=\"to_client\"}"] == 3)
        #expect(metrics["serializerd_open_streams{route=\"ws\",kind=\"websocket\"}"] == 0)
    }

    @Test func badHandshakesAreRefusedAndOtherUpgradesGoOnAsPlainRequests() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let upgrade = [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13")]
        let noKey = try proxy.get("/ws/echo", headers: upgrade)
        #expect(noKey.status == 400 && noKey.text.contains("Sec-WebSocket-Key"), "\(noKey.text)")
        let shortKey = try proxy.get("/ws/echo", headers: upgrade + [("Sec-WebSocket-Key", "c2hvcnQ=")])
        #expect(shortKey.status == 400)
        let key = ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
        let old = try proxy.get("/ws/echo", headers: [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "8"), key])
        #expect(old.status == 426 && old.header("Sec-WebSocket-Version") == "13" && old.text.contains("upgrade-required"), "\(old.text)")
        let post = try proxy.get("/ws/echo", method: "POST", headers: upgrade + [key])
        #expect(post.status == 400 && post.text.contains("GET"))
        let noConnection = try proxy.get("/ws/echo", headers: [("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"), key])
        #expect(noConnection.status == 400 && noConnection.text.contains("Connection"))
        // Another protocol: a plain request (the upstream refuses it with a 403 of its own).
        let other = try proxy.get("/ws/refuse", headers: [("Upgrade", "h2c"), ("Connection", "Upgrade")])
        #expect(other.status == 403 && other.text.contains("unacceptable-status"), "\(other.text)")
        #expect(proxy.stub.waitForLine { $0.hasPrefix("headers ") && !$0.contains("\"upgrade\"") } != nil)
    }

    @Test func anAnswerOtherThan101TakesTheOrdinaryPath() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        for target in ["/ws/refuse", "/ws/refuse?chunked=1"] {
            let ws = try WSClient(proxy.port, target, expectSwitch: false)
            let reply = try ws.connection.response()
            #expect(reply.status == 403 && reply.text.contains("\"body\":{\"error\":\"no sockets for you\",\"n\":1.50}"), "\(reply.text)")
        }
        let bad = try WSClient(proxy.port, "/ws/badaccept", expectSwitch: false)
        let reply = try bad.connection.response()
        #expect(reply.status == 502 && reply.text.contains("Sec-WebSocket-Accept does not match"), "\(reply.text)")
    }

    @Test func normalizeJSONReassemblesUpstreamTextMessages() throws {
        let proxy = try Self.harness("{ normalize: json }", extra: "    response: { remove_null_values: true }\n")
        defer { proxy.finish() }
        let ws = try WSClient(proxy.port, "/ws/frag?parts=4")
        // The pings between the fragments come first; the message once, normalized.
        let frames = (0..<4).compactMap { _ in ws.next() }
        #expect(frames.prefix(3).allSatisfy { $0.opcode == 9 && $0.text == "between" } && frames.count == 4)
        #expect(frames.last?.text == "{\"parts\":4,\"x\":2.5}", "\(frames.last?.text ?? "")")
        // Messages to the upstream are relayed as they are.
        ws.send(opcode: 1, Array("{ \"a\" : null }".utf8))
        #expect(ws.next()?.text == "{}")
        for (mode, expected) in [("pass", "{not json"), ("drop", "[1]"), ("error_event", "urn:serializerd:")] {
            let proxy = try Self.harness("{ normalize: json }", extra: "    stream: { on_invalid: \(mode) }\n")
            defer { proxy.finish() }
            let m = #"[[1,"{not json"],[1,"[1]"]]"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let ws = try WSClient(proxy.port, "/ws/script?m=" + m)
            #expect(ws.next()?.text.contains(expected) == true, "\(mode)")
        }
        let closing = try Self.harness("{ normalize: json }", extra: "    stream: { on_invalid: close }\n")
        defer { closing.finish() }
        let m = #"[[1,"{not json"],[1,"[1]"]]"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let closed = try WSClient(closing.port, "/ws/script?m=" + m)
        #expect(closed.next()?.text.contains("urn:serializerd:") == true)
        #expect(closed.next().map { $0.opcode == 8 && $0.closeCode == 1007 } == true)
        #expect(closing.stub.waitForLine { $0 == "closed script code=1001" } != nil)
    }

    @Test func violationsCloseBothSidesWithTheirCodes() throws {
        let proxy = try Self.harness("{ max_message: 1KiB }")
        defer { proxy.finish() }
        // An unmasked client frame: 1002 to the client, 1001 to the upstream.
        let unmasked = try WSClient(proxy.port, "/ws/echo")
        unmasked.connection.send([0x81, 0x02, 0x68, 0x69])
        #expect(unmasked.next().map { $0.opcode == 8 && $0.closeCode == 1002 } == true)
        #expect(unmasked.connection.waitForClose())
        #expect(proxy.stub.waitForLine { $0 == "closed echo code=1001" } != nil)
        // A frame announcing 2^63 - 1 bytes: refused before any of it is held.
        let huge = try WSClient(proxy.port, "/ws/echo")
        huge.connection.send([0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(huge.next().map { $0.opcode == 8 && $0.closeCode == 1009 } == true)
        #expect(proxy.stub.waitForLine { $0 == "closed echo code=1009" } != nil)
        // An upstream message over max_message.
        let big = try WSClient(proxy.port, "/ws/big?size=2000")
        #expect(big.next().map { $0.opcode == 8 && $0.closeCode == 1009 } == true)
        #expect(proxy.stub.waitForLine { $0 == "closed big code=1009" } != nil)
        // A masked frame from the upstream: 1002 to it, 1001 to the client.
        let masked = try WSClient(proxy.port, "/ws/masked")
        #expect(masked.next().map { $0.opcode == 8 && $0.closeCode == 1001 } == true)
        #expect(proxy.stub.waitForLine { $0 == "closed masked code=1002" } != nil)
        // A close frame with an invalid code, and a continuation with nothing to continue.
        let badClose = try WSClient(proxy.port, "/ws/echo")
        badClose.send(opcode: 8, [0x03, 0xE7])
        #expect(badClose.next().map { $0.opcode == 8 && $0.closeCode == 1002 } == true)
        let stray = try WSClient(proxy.port, "/ws/echo")
        stray.send(opcode: 0, [1])
        #expect(stray.next().map { $0.opcode == 8 && $0.closeCode == 1002 } == true)
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"websocket_message_too_big\"") } != nil)
        // The worker is fine.
        let echo = try WSClient(proxy.port, "/ws/echo")
        echo.send(opcode: 1, Array("still here".utf8))
        #expect(echo.next()?.text == "still here")
    }

    @Test func eachSideGoingAwayClosesTheOther() throws {
        let proxy = try Self.harness("{ idle: 1s }")
        defer { proxy.finish() }
        let vanish = try WSClient(proxy.port, "/ws/vanish")
        #expect(vanish.next().map { $0.opcode == 8 && $0.closeCode == 1001 } == true)
        #expect(vanish.connection.waitForClose())
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"upstream_unavailable\"") } != nil)
        // The upstream's close frame reaches the client, whose answer reaches the upstream.
        let closes = try WSClient(proxy.port, "/ws/close?code=4000")
        #expect(closes.next().map { $0.opcode == 8 && $0.closeCode == 4000 } == true)
        closes.send(opcode: 8, [0x0F, 0xA0])
        #expect(proxy.stub.waitForLine { $0 == "closed close code=4000" } != nil)
        #expect(closes.connection.waitForClose())
        // A client that leaves: the upstream gets 1001 at once.
        let leaves = try WSClient(proxy.port, "/ws/silent")
        let left = Date()
        leaves.connection.shutdownWrite()
        #expect(proxy.stub.waitForLine { $0 == "closed silent code=1001" } != nil)
        #expect(Date().timeIntervalSince(left) < 1, "\(Date().timeIntervalSince(left))")
        #expect(proxy.daemon.waitForLine { $0.contains("\"outcome\":\"client_gone\"") } != nil)
        // Nothing either way for websocket.idle: 1001 to both.
        let idle = try WSClient(proxy.port, "/ws/silent")
        let opened = Date()
        #expect(idle.next(timeout: 5).map { $0.opcode == 8 && $0.closeCode == 1001 && $0.text.contains("websocket.idle") } == true)
        #expect(Date().timeIntervalSince(opened) >= 0.9)
        #expect(proxy.stub.waitForLine { $0 == "closed silent code=1001" } != nil)
    }

    @Test func stoppingTheDaemonClosesEachWebSocketWith1001() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let ws = try WSClient(proxy.port, "/ws/silent")
        ws.send(opcode: 1, Array("hi".utf8))
        #expect(ws.next()?.text == "hi")
        #expect(proxy.daemon.stop() == 0)
        #expect(ws.next().map { $0.opcode == 8 && $0.closeCode == 1001 && $0.text.contains("stopping") } == true)
        #expect(proxy.stub.waitForLine { $0 == "closed silent code=1001" } != nil)
    }

    @Test func aSlowReaderPausesTheUpstreamAndLosesNothing() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        let ws = try WSClient(proxy.port, "/ws/flood?mb=32", receiveBuffer: 65536)
        // Nobody reads: the upstream's sends block well short of 32 MiB.
        var last = -1, sent = 0
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            usleep(300_000)
            sent = Self.flooded(proxy)
            if sent == last { break }
            last = sent
        }
        // The kernel's own buffers (autotuned up to net.ipv4.tcp_rmem's maximum) take some.
        #expect(sent == last && sent < 16 << 20, "\(sent)")
        // `/-/inflight` shows it (the board is refreshed four times a second).
        var inflight = ""
        let shown = Date().addingTimeInterval(5)
        while Date() < shown, !inflight.contains("\"kind\":\"websocket\"") {
            inflight = (try? proxy.get("/-/inflight").text) ?? ""
            usleep(50_000)
        }
        #expect(inflight.contains("\"kind\":\"websocket\"") && inflight.contains("\"messages_to_client\""), "\(inflight)")
        // Read it all: every message arrives whole and in order.
        var messages = 0
        while messages < 512, let frame = ws.next(timeout: 10) {
            guard frame.opcode == 2, frame.payload.count == 65536 else { break }
            messages += 1
        }
        #expect(messages == 512)
    }

    static func flooded(_ proxy: ProxyHarness) -> Int {
        guard let raw = try? RawHTTP.request(port: proxy.stubPort, target: "/v1/sent"),
              let json = try? JSONSerialization.jsonObject(with: Data(raw.body)) as? [String: Int] else { return -1 }
        return json["flood"] ?? -1
    }

    @Test func manyWebSocketsOpenedAndDroppedAtOnce() throws {
        let proxy = try Self.harness()
        defer { proxy.finish() }
        // Every handshake is sent before any answer is read.
        var sockets: [WSClient] = []
        for _ in 0..<1000 { sockets.append(try WSClient(proxy.port, "/ws/silent", expectSwitch: false)) }
        for socket in sockets { try socket.finishHandshake() }
        let metrics = Metrics(try proxy.get("/metrics").text)
        #expect(metrics["serializerd_open_streams{route=\"ws\",kind=\"websocket\"}"] == 1000)
        sockets.removeAll()
        let deadline = Date().addingTimeInterval(10)
        var open = -1.0
        while Date() < deadline {
            // A gauge at 0 with no message counted is not shown.
            open = Metrics(try proxy.get("/metrics").text)["serializerd_open_streams{route=\"ws\",kind=\"websocket\"}"] ?? 0
            if open == 0 { break }
            usleep(20_000)
        }
        #expect(open == 0)
        // Each upstream heard its client go: a close with 1001.
        #expect(proxy.stub.waitForText { $0.components(separatedBy: "closed silent code=1001").count == 1001 })
        let echo = try WSClient(proxy.port, "/ws/echo")
        echo.send(opcode: 1, Array("after".utf8))
        #expect(echo.next()?.text == "after")
    }

    @Test func theLastMessagesAreKeptRedactedWhileSomeoneWatches() throws {
        let proxy = try ProxyHarness(routes: "  - name: ws\n    match: { prefix: /ws/ }\n    upstream: {stub}\n",
                                     top: "capture: { redact_json: [/password] }\n", script: "ws_upstream.py")
        defer { proxy.finish() }
        // Nobody watches: nothing is kept.
        let unwatched = try WSClient(proxy.port, "/ws/echo")
        unwatched.send(opcode: 1, Array("{\"password\":\"hunter2\"}".utf8))
        #expect(unwatched.next() != nil)
        let unkept = try proxy.get("/-/streams/" + (unwatched.header("X-Request-Id") ?? "x"))
        #expect(unkept.status == 404 && unkept.text.contains("no-such-stream"), "\(unkept.text)")
        // The inspector watches /-/events.
        let watcher = try RawConnection(port: proxy.port)
        watcher.send("GET /-/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(!watcher.read { RawHTTP.find([13, 10, 13, 10], in: $0) != nil }.isEmpty)
        let ws = try WSClient(proxy.port, "/ws/echo")
        let id = ws.header("X-Request-Id") ?? ""
        ws.send(opcode: 1, Array("{\"password\":\"hunter2\",\"n\":1}".utf8))
        #expect(ws.next() != nil)
        ws.send(opcode: 2, [1, 2, 3])
        #expect(ws.next() != nil)
        ws.send(opcode: 8, [0x03, 0xE8])
        #expect(ws.next()?.opcode == 8)
        #expect(ws.connection.waitForClose())
        var kept = try proxy.get("/-/streams/" + id)
        let deadline = Date().addingTimeInterval(5)
        while kept.text.contains("\"open\":true") && Date() < deadline {
            usleep(20_000)
            kept = try proxy.get("/-/streams/" + id)
        }
        let doc = proxy.json(kept) ?? [:]
        let events = doc["events"] as? [[String: Any]] ?? []
        #expect(kept.status == 200 && doc["kind"] as? String == "websocket" && doc["open"] as? Bool == false, "\(kept.text)")
        #expect(events.map { $0["direction"] as? String ?? "" } == ["send", "receive", "send", "receive"], "\(kept.text)")
        #expect(events.first?["data"] as? String == "{\"password\":\"[redacted]\",\"n\":1}" && !kept.text.contains("hunter2"), "\(kept.text)")
        #expect(events.last?["event"] as? String == "binary" && events.last?["bytes"] as? Int == 3)
    }

    @Test func aConversationIsRecordedThenReplayedWithTheUpstreamGone() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ws-tape-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = "tapes: { dir: \(dir) }\ncapture: { redact_json: [/password] }\n"
        let recording = try ProxyHarness(routes: "  - name: ws\n    match: { prefix: /ws/ }\n    upstream: {stub}\n    tape: { mode: record }\n",
                                         top: top, script: "ws_upstream.py")
        let m = #"[[1,"hello"]]"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        // The upstream answers each client message 0.4 s after it came.
        let target = "/ws/script?m=" + m + "&delay=0.4"
        let live = try WSClient(recording.port, target)
        #expect(live.next()?.text == "hello")
        live.send(opcode: 1, Array("{\"password\":\"hunter2\"}".utf8))
        #expect(live.next()?.text == "{\"password\":\"hunter2\"}")
        live.send(opcode: 2, [1, 2, 3])
        #expect(live.next()?.payload == [1, 2, 3])
        live.send(opcode: 8, [0x03, 0xE8])
        #expect(live.next()?.opcode == 8)
        #expect(live.connection.waitForClose())
        #expect(recording.daemon.waitForLine { $0.contains("\"kind\":\"websocket\"") } != nil)
        #expect(recording.finish() == 0)
        let har = try String(contentsOfFile: dir + "/ws.har", encoding: .utf8)
        #expect(har.contains("\"_webSocketMessages\":[{\"type\":\"receive\"") && har.contains("\"status\":101"), "\(har.prefix(3000))")
        #expect(har.contains("[redacted]") && !har.contains("hunter2") && har.contains("\"opcode\":2,\"data\":\"AQID\""), "\(har.prefix(3000))")

        for timing in ["recorded", "fast"] {
            let routes = "  - name: ws\n    match: { prefix: /ws/ }\n    upstream: http://127.0.0.1:9/v1\n"
                + "    tape: { mode: replay, timing: \(timing) }\n"
            let replaying = try ProxyHarness(routes: routes, top: top, script: "ws_upstream.py")
            defer { replaying.finish() }
            let ws = try WSClient(replaying.port, target)
            #expect(ws.header("Sec-WebSocket-Accept") == WSClient.accept(ws.key) && ws.header("Serializerd-Source") == "tape")
            // The upstream's first message at once, then after each client message what followed it.
            #expect(ws.next()?.text == "hello", "\(timing)")
            let sent = Date()
            ws.send(opcode: 1, Array("anything".utf8))
            #expect(ws.next()?.text == "{\"password\":\"[redacted]\"}", "\(timing)")
            // Its recorded distance from the client's message, or none.
            let waited = Date().timeIntervalSince(sent)
            #expect(timing == "recorded" ? waited >= 0.3 : waited < 0.2, "\(timing): \(waited) s")
            ws.send(opcode: 2, [9])
            #expect(ws.next()?.payload == [1, 2, 3], "\(timing)")
            ws.send(opcode: 8, [0x03, 0xE8])
            #expect(ws.next().map { $0.opcode == 8 && $0.closeCode == 1000 } == true)
            #expect(replaying.daemon.waitForLine { $0.contains("\"source\":\"tape\"") && $0.contains("\"kind\":\"websocket\"") } != nil)
            // A replay still open when the daemon stops gets 1001, as a relayed one does.
            let open = try WSClient(replaying.port, target)
            #expect(open.next()?.text == "hello")
            #expect(replaying.daemon.stop() == 0)
            #expect(open.next().map { $0.opcode == 8 && $0.closeCode == 1001 } == true, "\(timing)")
        }
    }

    @Test func badSettingsAreConfigErrorsWithTheirPosition() throws {
        let mode = try checkRoute("websocket", "{ mode: tunnel }")
        #expect(mode.status != 0 && mode.stderrText.contains(":5:") && mode.stderrText.contains("expected relay or off, found 'tunnel'"), "\(mode.stderrText)")
        let normalize = try checkRoute("websocket", "{ normalize: xml }")
        #expect(normalize.status != 0 && normalize.stderrText.contains("expected none or json"))
        let tiny = try checkRoute("websocket", "{ max_message: 64B }")
        #expect(tiny.status != 0 && tiny.stderrText.contains("at least 125 bytes"), "\(tiny.stderrText)")
        let unknown = try checkRoute("websocket", "{ ping: 5s }")
        #expect(unknown.status != 0 && unknown.stderrText.contains("ping"))
    }

    @Test func wssKeepsTLSInLibcurlsHands() throws {
        let tls = try TLSFixture()
        let proxy = try Self.harness(extra: "    tls: { ca_file: \(tls.path("ca.pem")) }\n",
                                     arguments: ["--tls", tls.path("server.pem"), tls.path("server.key")], scheme: "https")
        defer { proxy.finish() }
        let ws = try WSClient(proxy.port, "/ws/echo")
        let big = [UInt8](repeating: 0x61, count: 200_000)
        ws.send(opcode: 1, big)
        #expect(ws.next()?.payload == big)
        ws.send(opcode: 8, [0x03, 0xE8])
        #expect(ws.next().map { $0.opcode == 8 && $0.closeCode == 1000 } == true)
        // A CA that did not sign it: the handshake is answered with the TLS failure.
        let stranger = try Self.harness(extra: "    tls: { ca_file: \(tls.path("other-ca.pem")) }\n",
                                        arguments: ["--tls", tls.path("server.pem"), tls.path("server.key")], scheme: "https")
        defer { stranger.finish() }
        let refused = try WSClient(stranger.port, "/ws/echo", expectSwitch: false)
        let reply = try refused.connection.response()
        #expect(reply.status == 502 && reply.text.contains("upstream-unavailable"), "\(reply.text)")
    }
}
