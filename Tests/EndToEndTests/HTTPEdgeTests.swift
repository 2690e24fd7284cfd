import Foundation
import TestSupport
import Testing

/// serializerd's own HTTP/1.1 server through real sockets: strict framing (nothing can
/// be smuggled past it), every refusal a problem document, pipelining, half-close,
/// Expect: 100-continue, deadlines and the connection cap.
@Suite(.timeLimit(.minutes(5)))
struct HTTPEdgeTests {
    static let routes = route("api", prefix: "/api/")

    /// Sends `bytes` on a fresh connection and reads until the daemon closes it.
    func exchange(_ proxy: ProxyHarness, _ text: String) throws -> [UInt8] {
        let connection = try RawConnection(port: proxy.port)
        connection.send(text)
        _ = connection.waitForClose(timeout: 5)
        return connection.unread
    }

    @Test func smugglingShapesAreRefusedWithOneProblemAndAClose() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let smuggled = "GET /api/echo?smuggled=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
        let shapes = [
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: \(smuggled.utf8.count + 5)\r\n\r\nhello" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5, 6\r\n\r\nhello!" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: +5\r\n\r\nhello" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n 3\r\nabc\r\n0\r\n\r\n" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n" + smuggled,
            "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n" + smuggled,
            "GET /api/echo HTTP/1.1\r\nHost: localhost\r\nX-Folded: a\r\n b\r\n\r\n" + smuggled,
            "GET /api/echo HTTP/1.1\nHost: x\n\n" + smuggled,
            "GET /api/echo HTTP/1.1\r\nHost: localhost\r\nBad Name: 1\r\n\r\n" + smuggled,
            "GET /api/echo HTTP/1.1\r\nHost: localhost\r\nHost: y\r\n\r\n" + smuggled,
            "GET /api/echo?a b HTTP/1.1\r\nHost: localhost\r\n\r\n" + smuggled,
            "GARBAGE\r\n\r\n" + smuggled,
        ]
        for shape in shapes {
            let raw = try exchange(proxy, shape)
            let text = String(decoding: raw, as: UTF8.self)
            #expect(RawResponse.statusLineCount(raw) == 1, "\(shape.debugDescription) → \(text)")
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(shape.debugDescription) → \(text)")
            #expect(text.contains("\r\nConnection: close\r\n") && text.contains("\r\nX-Request-Id: ") && text.contains("\r\nServer-Timing: total;dur="))
            #expect(text.contains("\"type\":\"urn:serializerd:bad-request\""), "\(text)")
        }
        // Every refusal was logged, and none of the smuggled requests was served.
        let lines = { proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"msg\":\"request_completed\"") } }
        let refusals = { lines().filter { $0.contains("\"outcome\":\"bad_request\"") && $0.contains("\"status\":400") } }
        for _ in 0..<100 where refusals().count < shapes.count { usleep(20_000) }
        #expect(refusals().count == shapes.count)
        #expect(lines().count == shapes.count, "\(lines())")
    }

    @Test func traceOnARouteWithoutMethodsNamesWhatTheRouteAllows() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/json", method: "TRACE")
        #expect(reply.status == 405)
        #expect(reply.header("Allow") == "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT", "\(reply.headers)")
    }

    @Test func aBodyIsFramedByContentLengthWhateverTheMethod() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let inner = "GET /api/echo?inner=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for method in ["HEAD", "TRACE", "GET"] {
            let connection = try RawConnection(port: proxy.port)
            connection.send("\(method) /api/json HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(inner.utf8.count)\r\n\r\n\(inner)")
            let first = try connection.response(bodyless: method == "HEAD")
            #expect(method == "TRACE" ? first.status == 405 : first.status == 200, "\(method)")
            // The body was a body: nothing else answers on the connection.
            connection.shutdownWrite()
            _ = connection.waitForClose(timeout: 5)
            #expect(RawResponse.statusLineCount(connection.unread) == 0, "\(method): \(String(decoding: connection.unread, as: UTF8.self))")
        }
        // Three requests were served, all /api/json: the body never ran as /api/echo.
        let lines = { proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"msg\":\"request_completed\"") } }
        for _ in 0..<100 where lines().count < 3 { usleep(20_000) }
        #expect(lines().count == 3 && lines().allSatisfy { $0.contains("\"path\":\"/api/json\"") }, "\(lines())")
    }

    @Test func anyTokenMethodIsRoutedAndConnectGetsACompleteRefusal() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        for method in ["PROPFIND", "MKCOL", "PURGE", "get"] {
            let reply = try proxy.get("/api/echo", method: method)
            #expect(reply.status == 200, "\(method): \(reply.text)")
            #expect((proxy.json(reply)?["method"] as? String) == method)
        }
        // CONNECT: 405 with Allow and a Content-Length, then the connection ends.
        let raw = try exchange(proxy, "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n")
        let text = String(decoding: raw, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 405 "), "\(text)")
        #expect(text.contains("\r\nAllow: ") && !text.contains("CONNECT,") && text.contains("\r\nContent-Length: ") && text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains("urn:serializerd:method-not-allowed"))
        // TRACE is not proxied by a route without `methods`.
        #expect(try proxy.get("/api/echo", method: "TRACE").status == 405)
    }

    @Test func aGetWithABodyStaysAGetAndCarriesViaUpstream() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/echo", method: "GET", headers: [("Via", "1.0 corp-proxy")], body: Array("{\"q\":1}".utf8))
        let echo = proxy.json(reply)
        #expect(echo?["method"] as? String == "GET")
        #expect(echo?["body"] as? String == "{\"q\":1}")
        let via = (echo?["headers"] as? [String: Any])?["via"] as? String ?? ""
        #expect(via.hasPrefix("1.0 corp-proxy, 1.1 serializerd-"), "\(via)")
        // The daemon's own entry coming back is a loop.
        let own = String(via.split(separator: ",").last!.drop { $0 == " " })
        let loop = try proxy.get("/api/echo", headers: [("Via", "1.1 other, \(own)")])
        #expect(loop.status == 508 && proxy.json(loop)?["type"] as? String == "urn:serializerd:loop-detected")
        // An upstream redirecting back to the daemon ends at once (not 40 nested requests).
        let back = try proxy.get("/api/redirect?to=http://127.0.0.1:\(proxy.port)/api/redirect")
        #expect(back.status == 508, "\(back.status) \(back.text)")
        let nested = { proxy.daemon.text.split(separator: "\n").filter { $0.contains("\"path\":\"/api/redirect\"") } }
        for _ in 0..<100 where nested().count < 2 { usleep(20_000) }
        #expect(nested().count == 2)
    }

    /// DESIGN §4: libcurl ignores the proxy environment variables. The "proxy" listens
    /// and never answers, so a request sent through it would time out.
    @Test func theEnvironmentsProxyIsNeverUsed() throws {
        let listener = try LoopbackListener()
        defer { listener.close() }
        guard fcntl(listener.fd, F_SETFL, O_NONBLOCK) == 0 else { throw TestFailure("cannot make the listener non-blocking") }
        let proxyURL = "http://127.0.0.1:\(listener.port)"
        let environment = ["http_proxy": proxyURL, "HTTP_PROXY": proxyURL, "https_proxy": proxyURL, "ALL_PROXY": proxyURL,
                           "all_proxy": proxyURL, "no_proxy": "", "NO_PROXY": ""]
        let proxy = try ProxyHarness(routes: route("api", prefix: "/api/", extra: "    timeout: 2s\n"), environment: environment)
        defer { proxy.finish() }
        let reply = try proxy.get("/api/echo")
        #expect(reply.status == 200 && proxy.json(reply)?["method"] as? String == "GET", "\(reply.status) \(reply.text)")
        // Nobody ever connected to the proxy.
        #expect(accept(listener.fd, nil, nil) == -1 && errno == EAGAIN)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderEachOnce() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        var batch = ""
        for k in 0..<6 {
            let target = k % 2 == 0 ? "/api/json" : "/nowhere"
            batch += "GET \(target) HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: pipe-\(k)\r\n\r\n"
        }
        batch += "POST /api/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nX-Request-Id: pipe-6\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"
        connection.send(batch)
        for k in 0..<7 {
            let reply = try connection.response()
            #expect(reply.header("X-Request-Id") == "pipe-\(k)")
            #expect(reply.status == (k == 6 || k % 2 == 0 ? 200 : 404))
            if k == 6 { #expect(proxy.json(reply)?["body"] as? String == "abcde") }
        }
        connection.shutdownWrite()
        #expect(connection.waitForClose())
        #expect(connection.unread.isEmpty)
    }

    @Test func aClientThatHalfClosesStillGetsItsReply() throws {
        let proxy = try ProxyHarness(routes: Self.routes)
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        connection.send("GET /api/slow?seconds=0.3 HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: half-1\r\n\r\n")
        connection.shutdownWrite()
        let reply = try connection.response()
        #expect(reply.status == 200 && reply.text == #"{"slow":true}"#)
        #expect(connection.waitForClose())
        let line = proxy.daemon.waitForLine { $0.contains("\"request_id\":\"half-1\"") }
        #expect(line?.contains("\"outcome\":\"ok\"") == true, "\(line ?? "none")")
    }

    @Test func expectContinueIsAnsweredOnlyForABodyThatWillBeRead() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "limits: { max_request_body: 1KiB }\n")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        connection.send("POST /api/echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let interim = connection.read { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
        #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        _ = try? connection.response(timeout: 0.01)   // drops the 100 from the buffer
        connection.send("hello")
        let reply = try connection.response()
        #expect(reply.status == 200 && proxy.json(reply)?["body"] as? String == "hello")

        // Over the limit: 413 at once, no 100, and the body is never awaited.
        let refused = try RawConnection(port: proxy.port)
        refused.send("POST /api/echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        let tooLarge = try refused.response()
        #expect(tooLarge.status == 413 && tooLarge.header("Connection") == "close")
        #expect(refused.waitForClose())
    }

    @Test func aClientStillSendingAnOversizeBodyReadsItsRefusal() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "limits: { max_request_body: 1KiB }\n")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 5_000_000)
        connection.send("POST /api/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n")
        // The body keeps coming after the refusal (RFC 9112 §9.6: the daemon shuts down
        // its side and drains input before closing).
        let sender = Thread { _ = connection.send(body) }
        sender.start()
        let reply = try connection.response(timeout: 10)
        #expect(reply.status == 413 && proxy.json(reply)?["type"] as? String == "urn:serializerd:request-too-large")
        #expect(connection.waitForClose(timeout: 10))
    }

    @Test func aRequestMustArriveWithinClientIdleOfItsFirstByte() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "timeouts: { client_idle: 1s }\n")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port)
        let started = Date()
        // A byte every 100 ms keeps an inactivity timer alive forever; the deadline is not one.
        var closed = false
        for byte in "GET /api/json HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".utf8 + Array(repeating: UInt8(ascii: "a"), count: 100) {
            if !connection.send([byte]) { closed = true; break }
            if connection.read(timeout: 0.1).count > 0 || connection.closedByPeer { closed = true; break }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(closed && connection.closedByPeer)
        #expect(elapsed > 0.9 && elapsed < 3, "closed after \(elapsed) s")
        // Others are served meanwhile and after.
        #expect(try proxy.get("/api/json").status == 200)
    }

    @Test func aReplyNotDrainedWithinClientIdleEndsTheConnectionAsGone() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "timeouts: { client_idle: 1s }\n")
        defer { proxy.finish() }
        let connection = try RawConnection(port: proxy.port, receiveBuffer: 4096)
        connection.send("GET /api/big?bytes=8000000 HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: slow-reader\r\n\r\n")
        // Never reads: the daemon gives up on it.
        let line = proxy.daemon.waitForLine(timeout: 10) { $0.contains("\"request_id\":\"slow-reader\"") }
        #expect(line?.contains("\"outcome\":\"client_gone\"") == true, "\(line ?? "none")")
        #expect(line?.contains("\"status\":499") == true)
        #expect(try proxy.get("/api/json").status == 200)
    }

    @Test func atTheConnectionCapTheLongestWaitingConnectionMakesRoom() throws {
        let proxy = try ProxyHarness(routes: Self.routes, top: "limits: { max_connections: 4 }\n", workers: 1)
        defer { proxy.finish() }
        var idle: [RawConnection] = []
        for _ in 0..<4 {
            let connection = try RawConnection(port: proxy.port)
            connection.send("GET /api/json HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try connection.response().status == 200)
            idle.append(connection)
        }
        // A fifth client is served; the connection idle the longest was closed for it.
        #expect(try proxy.get("/api/json").status == 200)
        #expect(idle[0].waitForClose(timeout: 2))
        #expect(try proxy.get("/-/health").status == 200)
    }
}
