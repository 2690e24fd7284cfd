import Cache
import EventLoop
import Foundation
import HTTPCore
@testable import Proxy
import Telemetry
import Testing
import Upstream

/// Time for an in-process pipeline: it moves only when the test says so.
final class TestClock: @unchecked Sendable {
    var now = 1_000.0
    var wall = 1_800_000_000.0

    func advance(_ seconds: Double) {
        now += seconds
        wall += seconds
    }

    lazy var pipelineClock = PipelineClock(now: { [unowned self] in self.now }, wall: { [unowned self] in self.wall })
}

/// The stub upstream's scenarios (`Tests/Fixtures/stub_upstream.py`), answered in memory:
/// each path is a scenario, its query tunes it. Tasks wait until `answer` runs them, so
/// a test decides when an upstream answers (and can hold one in flight).
final class ScriptedUpstream: UpstreamClient {
    struct Resource {
        var requests = 0
        var notModified = 0
        var mode = "json"
        var version = 1
        var conditionals: [(ifNoneMatch: String?, ifModifiedSince: String?)] = []
    }

    let clock: TestClock
    private(set) var pending: [(request: UpstreamRequest, completion: (Result<UpstreamResponse, UpstreamFailure>) -> Void)] = []
    /// Every request the upstream received, in order.
    private(set) var received: [UpstreamRequest] = []
    /// The `cached/KEY` resources' state.
    var resources: [String: Resource] = [:]
    /// No upstream listening: every task fails to connect.
    var down = false

    init(clock: TestClock) { self.clock = clock }

    func start(_ request: UpstreamRequest, completion: @escaping (Result<UpstreamResponse, UpstreamFailure>) -> Void) {
        pending.append((request, completion))
    }

    func abortAll() {
        let aborted = pending
        pending = []
        for task in aborted { task.completion(.failure(.aborted)) }
    }

    func close() {}

    /// Answers the tasks waiting now; true when there were any.
    @discardableResult
    func answer() -> Bool {
        let tasks = pending
        pending = []
        for task in tasks { task.completion(respond(to: task.request)) }
        return !tasks.isEmpty
    }

    func respond(to request: UpstreamRequest) -> Result<UpstreamResponse, UpstreamFailure> {
        if down { return .failure(.unavailable(code: 7, message: "Failed to connect to upstream.test port 80: Connection refused")) }
        received.append(request)
        let url = URLComponents(string: request.url)!
        var query: [String: String] = [:]
        for item in url.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let segments = url.path.split(separator: "/").map(String.init)
        let name = segments.last ?? ""
        let status = Int(query["status"] ?? "") ?? 200
        let type = query["type"] ?? "application/json"
        func reply(_ status: Int, _ body: String, _ type: String? = "application/json", _ fields: [(String, String)] = []) -> Result<UpstreamResponse, UpstreamFailure> {
            reply(status, Array(body.utf8), type, fields)
        }
        func reply(_ status: Int, _ body: [UInt8], _ type: String?, _ fields: [(String, String)]) -> Result<UpstreamResponse, UpstreamFailure> {
            var all = fields
            if let type { all.insert(("Content-Type", type), at: 0) }
            // `date=TEXT` replaces the Date header's value (an upstream's own, valid or not).
            all.append(("Date", query["date"] ?? HTTPDate.format(unixSeconds: clock.wall)))
            let lines = all.map { "\($0.0): \($0.1)\r\n" }.joined()
            return .success(UpstreamResponse(status: status, headerLines: lines, contentType: type,
                                             body: request.method == "HEAD" ? [] : body, url: request.url))
        }
        if segments.count >= 3, segments[segments.count - 2] == "cached" { return cached(name, query, request, reply) }
        switch name {
        case "echo":
            var headers: [String: String] = [:]
            request.headers.forEach { headers[String(decoding: $0, as: UTF8.self).lowercased()] = String(decoding: $1, as: UTF8.self) }
            let path = url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
            let document: [String: Any] = ["method": request.method, "path": path, "headers": headers,
                                           "body": String(decoding: request.body, as: UTF8.self)]
            return reply(status, Array(try! JSONSerialization.data(withJSONObject: document)), "application/json", [])
        case "json":
            return reply(status, query["body"] ?? #"{"a": [1, 2.50, null], "b": "x\/y"}"#, type,
                         [("Cache-Control", "max-age=60"), ("ETag", #""v1""#), ("Vary", "Accept"), ("X-Other", "1"), ("Keep-Alive", "timeout=5")])
        case "xml":
            return reply(status, #"<?xml version="1.0"?><rss><channel><item><t>a</t></item></channel></rss>"#, "application/xml")
        case "plist":
            return reply(status, #"<?xml version="1.0"?><plist version="1.0"><dict><key>k</key><integer>7</integer></dict></plist>"#,
                         "application/x-plist")
        case "png":
            return reply(status, Array(FileManager.default.contents(atPath: query["file"] ?? "") ?? Data()), "image/png", [])
        case "file":
            return reply(status, Array(FileManager.default.contents(atPath: query["path"] ?? "") ?? Data()),
                         query["type"] ?? "application/octet-stream", [])
        case "text":
            return reply(status, [0x63, 0x61, 0x66, 0xE9], "text/plain; charset=iso-8859-1", [])
        case "form":
            return reply(status, "a=1&b[]=x&c[d]=y", "application/x-www-form-urlencoded")
        case "empty":
            return reply(Int(query["status"] ?? "") ?? 204, "", query["notype"] == nil ? type : nil)
        case "space":
            return reply(status, " ", type)
        default:
            return reply(404, #"{"error":"no such scenario"}"#)
        }
    }

    /// `cached/KEY`: counts its requests; `cc=` Cache-Control (default max-age=60, empty
    /// for none), `noetag`, `lm=` Last-Modified, `vary=`, `cookie`; a matching
    /// If-None-Match gets 304; `resources[KEY].mode` json, html or 503.
    private func cached(_ key: String, _ query: [String: String], _ request: UpstreamRequest,
                        _ reply: (Int, String, String?, [(String, String)]) -> Result<UpstreamResponse, UpstreamFailure>)
        -> Result<UpstreamResponse, UpstreamFailure> {
        var state = resources[key] ?? Resource()
        state.requests += 1
        var ifNoneMatch: String?, ifModifiedSince: String?, user: String?
        request.headers.forEach { name, value in
            switch String(decoding: name, as: UTF8.self).lowercased() {
            case "if-none-match": ifNoneMatch = String(decoding: value, as: UTF8.self)
            case "if-modified-since": ifModifiedSince = String(decoding: value, as: UTF8.self)
            case "authorization", "x-user": user = user ?? String(decoding: value, as: UTF8.self)
            default: break
            }
        }
        if ifNoneMatch != nil || ifModifiedSince != nil { state.conditionals.append((ifNoneMatch, ifModifiedSince)) }
        defer { resources[key] = state }
        let etag = "\"v\(state.version)\""
        var fields: [(String, String)] = []
        let cc = query["cc"] ?? "max-age=60"
        if !cc.isEmpty { fields.append(("Cache-Control", cc)) }
        if query["noetag"] == nil { fields.append(("ETag", etag)) }
        if let lm = query["lm"] { fields.append(("Last-Modified", lm)) }
        if let vary = query["vary"] { fields.append(("Vary", vary)) }
        if query["cookie"] != nil { fields.append(("Set-Cookie", "session=abc")) }
        if state.mode == "503" { return reply(503, #"{"error":"down"}"#, "application/json", fields) }
        if let ifNoneMatch, ifNoneMatch == etag, query["noetag"] == nil {
            state.notModified += 1
            return reply(304, "", nil, fields)
        }
        if state.mode == "html" { return reply(200, "<html><body>Service temporarily broken</body></html>", "text/html", fields) }
        let who = user.map { "\"\($0)\"" } ?? "null"
        return reply(200, #"{"key":"\#(key)","n":\#(state.requests),"v":\#(state.version),"who":\#(who)}"#, "application/json", fields)
    }
}

/// serializerd's request path in this process: a worker's pipeline (no loop running, no
/// socket), a scripted upstream and a test clock. A request is answered as soon as the
/// upstream answers, which `get` lets it do unless the test holds it.
final class InProcessProxy {
    let clock = TestClock()
    let upstream: ScriptedUpstream
    let worker: Worker
    let cache: ProcessCache
    let mailbox = Mailbox()
    /// Shared by every load of this proxy's config, as the server shares its own.
    let state = ProcessState()
    private(set) var config: ServerConfig

    /// `routes` is YAML for the `routes:` list; `{stub}` becomes the upstream's base URL.
    init(routes: String, top: String = "") throws {
        upstream = ScriptedUpstream(clock: clock)
        config = try Self.load(routes: routes, top: top, state: state)
        cache = ProcessCache(maxBytes: config.cacheMaxBytes)
        cache.apply(routes: config.routes.map { ($0.name, $0.fingerprint) })
        let telemetry = Telemetry(output: LogOutput(fd: open("/dev/null", O_WRONLY)), version: "test", startTime: 0)
        let cache = cache
        telemetry.metrics.attachCache { cache.store.totals() }
        worker = try Worker(config: config, sockets: [], mailbox: mailbox, heartbeat: nil, telemetry: telemetry,
                            budget: ProcessBudget(maxConnections: 10, maxBufferedBytes: 64 << 20), via: "1.1 serializerd-test",
                            cache: cache, inflight: InflightBoard(), upstream: upstream, clock: clock.pipelineClock)
    }

    static func load(routes: String, top: String, state: ProcessState) throws -> ServerConfig {
        try ConfigLoader.load(yaml: top + "routes:\n" + routes.replacingOccurrences(of: "{stub}", with: "http://upstream.test/v1"),
                              file: "test.yaml", environment: [:], state: state)
    }

    /// A reload, as the server does it: entries of changed routes purged, then the new table.
    func reload(routes: String, top: String = "") throws {
        config = try Self.load(routes: routes, top: top, state: state)
        cache.apply(routes: config.routes.map { ($0.name, $0.fingerprint) })
        worker.pipeline.apply(config)
    }

    /// Sends one request and, unless `hold`, lets the upstream and parked requests run
    /// until nothing is left to do.
    @discardableResult
    func get(_ target: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = [],
             host: String = "127.0.0.1:8080", hold: Bool = false) -> RecordedExchange {
        let exchange = RecordedExchange(method, target, headers: [("Host", host)] + headers, body: body)
        worker.pipeline.handle(exchange)
        if !hold { settle() }
        return exchange
    }

    /// Runs what waits: upstream answers, then requests woken from another's miss.
    func settle() {
        var progressed = true
        while progressed {
            progressed = upstream.answer()
            for command in mailbox.drain() {
                if case .cacheFilled(let key) = command {
                    worker.pipeline.wakeParked(key)
                    progressed = true
                }
            }
        }
    }

    func metric(_ series: String) -> Double? {
        MetricsText.parse(get("/metrics").text)[series]
    }

    func requests(_ key: String) -> Int { upstream.resources[key]?.requests ?? 0 }
}

extension RecordedExchange {
    var status: Int? { reply?.status }
    var text: String { reply.map { String(decoding: $0.body, as: UTF8.self) } ?? "" }
    var replyBody: [UInt8] { reply?.body ?? [] }
}

/// Prometheus text as series → value.
enum MetricsText {
    static func parse(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }
}
