import Cache
import EventLoop
import Foundation
import HTTPCore
@testable import Proxy
import Telemetry
import Testing
import Upstream

/// An upstream answered by the test: it keeps each task and its completion.
final class HeldUpstream: UpstreamClient {
    var tasks: [(request: UpstreamRequest, completion: (Result<UpstreamResponse, UpstreamFailure>) -> Void)] = []
    func start(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) {
        tasks.append((request, completion))
    }
    func abortAll() {}
    func close() {}

    /// The header lines sent upstream, as "Name: value".
    func sentHeaders(_ k: Int = 0) -> [String] {
        tasks[k].request.headers.pairs.map { $0.0 + ": " + $0.1 }
    }
}

/// The request pipeline of one worker, with no socket on either side.
struct Pipeline {
    let worker: Worker
    let upstream = HeldUpstream()

    static func cache(_ config: ServerConfig) -> ProcessCache {
        let cache = ProcessCache(maxBytes: config.cacheMaxBytes)
        cache.apply(routes: config.routes.map { ($0.name, $0.fingerprint) })
        return cache
    }

    init(_ yaml: String) throws {
        let config = try ConfigLoader.load(yaml: yaml, file: "test.yaml", environment: [:], state: ProcessState())
        let telemetry = Telemetry(output: LogOutput(fd: open("/dev/null", O_WRONLY)), version: "test", startTime: 0)
        worker = try Worker(config: config, sockets: [], mailbox: Mailbox(), heartbeat: nil, telemetry: telemetry,
                            budget: ProcessBudget(maxConnections: 10, maxBufferedBytes: 1 << 20), via: "1.1 serializerd-test",
                            cache: Self.cache(config), inflight: InflightBoard(), upstream: upstream)
    }

    func run(_ exchange: RecordedExchange) -> RecordedExchange {
        worker.pipeline.handle(exchange)
        return exchange
    }
}

@Suite struct PipelineTests {
    static let yaml = """
        routes:
          - name: api
            match: { prefix: /api/ }
            upstream: http://127.0.0.1:9/v1
            headers: { Authorization: "Bearer route" }
          - name: ro
            match: { prefix: /ro/, methods: [GET] }
            upstream: http://127.0.0.1:9/
        """

    @Test func aRequestIsForwardedWithTheHeaderPolicyAndItsReplyTranscoded() throws {
        let pipeline = try Pipeline(Self.yaml)
        let exchange = RecordedExchange("PROPFIND", "/api/users/7?x=1", headers: [
            ("Host", "localhost"), ("Connection", "keep-alive"), ("Proxy-Authorization", "secret"), ("Authorization", "client's"),
            ("X-Forwarded-For", "10.0.0.1"), ("Via", "1.0 corp"), ("X-Keep", "yes"), ("X-Request-Id", "rid-1"),
        ])
        _ = pipeline.run(exchange)
        #expect(exchange.replies.isEmpty)
        let task = try #require(pipeline.upstream.tasks.first)
        #expect(task.request.method == "PROPFIND" && task.request.url == "http://127.0.0.1:9/v1/users/7?x=1")
        let sent = pipeline.upstream.sentHeaders()
        #expect(sent.contains("X-Keep: yes") && sent.contains("Authorization: Bearer route"))
        #expect(!sent.contains { $0.hasPrefix("Host:") || $0.hasPrefix("Connection:") || $0.hasPrefix("Proxy-") || $0 == "Authorization: client's" })
        #expect(sent.contains("X-Forwarded-For: 10.0.0.1, 127.0.0.1") && sent.contains("X-Request-Id: rid-1"))
        #expect(sent.contains("Via: 1.0 corp, 1.1 serializerd-test"))

        task.completion(.success(UpstreamResponse(status: 201, headerLines: "Cache-Control: no-store\r\nETag: \"x\"\r\n",
                                               contentType: "application/json", body: Array(#"{ "a" : [1, 2.50] }"#.utf8), url: task.request.url)))
        let reply = try #require(exchange.reply)
        #expect(reply.status == 201 && String(decoding: reply.body, as: UTF8.self) == #"{"a":[1,2.50]}"#)
        #expect(exchange.replyHeader("Cache-Control") == "no-store" && exchange.replyHeader("ETag") == nil)
        #expect(exchange.replyHeader("X-Request-Id") == "rid-1" && exchange.replyHeader("Server-Timing")?.contains("upstream;dur=") == true)
    }

    @Test func refusalsAreProblemDocumentsThatCloseTheConnection() throws {
        let pipeline = try Pipeline(Self.yaml)
        let cases: [(RecordedExchange, Int, String)] = [
            (RecordedExchange("GET", "", failure: .malformed("a line ends with LF alone")), 400, "bad-request"),
            (RecordedExchange("GET", "/api/x", failure: .headTooLarge(limit: 10)), 431, "headers-too-large"),
            (RecordedExchange("POST", "/api/x", failure: .bodyTooLarge(limit: 10)), 413, "request-too-large"),
            (RecordedExchange("CONNECT", "api.example.com:443"), 405, "method-not-allowed"),
        ]
        for (exchange, status, type) in cases {
            _ = pipeline.run(exchange)
            #expect(exchange.reply?.status == status)
            #expect(exchange.replyJSON?["type"] as? String == "urn:serializerd:\(type)")
            #expect(exchange.replyHeader("Connection") == "close")
        }
        #expect(cases[0].0.replyJSON?["detail"] as? String == "a line ends with LF alone")
        #expect(cases[3].0.replyHeader("Allow")?.contains("CONNECT") == false)
        #expect(pipeline.upstream.tasks.isEmpty)
    }

    @Test func routingAnswersWithoutAnUpstream() throws {
        let pipeline = try Pipeline(Self.yaml)
        #expect(pipeline.run(RecordedExchange("GET", "/nowhere")).reply?.status == 404)
        #expect(pipeline.run(RecordedExchange("POST", "/ro/x")).replyHeader("Allow") == "GET")
        #expect(pipeline.run(RecordedExchange("TRACE", "/api/x")).reply?.status == 405)
        #expect(pipeline.run(RecordedExchange("GET", "/api/a/../b")).reply?.status == 400)
        let loop = pipeline.run(RecordedExchange("GET", "/api/x", headers: [("Via", "1.1 a, 1.1 serializerd-test")]))
        #expect(loop.reply?.status == 508 && loop.replyJSON?["type"] as? String == "urn:serializerd:loop-detected")
        // A Unix-socket peer counts as loopback for admin endpoints; another network does not.
        let unix = RecordedExchange("GET", "/-/health")
        unix.peerAddress = "unix"
        unix.peerIsUnixSocket = true
        #expect(pipeline.run(unix).reply?.status == 200)
        let remote = RecordedExchange("GET", "/-/health")
        remote.peerAddress = "192.0.2.1"
        #expect(pipeline.run(remote).reply?.status == 403)
        #expect(pipeline.upstream.tasks.isEmpty)
    }

    @Test func upstreamFailuresMapToTheirRows() throws {
        let pipeline = try Pipeline(Self.yaml)
        let failures: [(UpstreamFailure, Int, String)] = [
            (.timeout, 504, "upstream-timeout"), (.bodyTooLarge(limit: 5), 502, "upstream-body-too-large"),
            (.unavailable(code: 7, message: "refused"), 502, "upstream-unavailable"), (.overloaded, 503, "overloaded"),
        ]
        for (k, (failure, status, type)) in failures.enumerated() {
            let exchange = pipeline.run(RecordedExchange("GET", "/api/x"))
            pipeline.upstream.tasks[k].completion(.failure(failure))
            #expect(exchange.reply?.status == status && exchange.replyJSON?["type"] as? String == "urn:serializerd:\(type)")
            if case .overloaded = failure { #expect(exchange.replyHeader("Retry-After") == "1") }
        }
    }
}
