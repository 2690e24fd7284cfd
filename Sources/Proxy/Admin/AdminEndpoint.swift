import EventLoop
import HTTPCore
import Serializers
import Tapes
import Telemetry

/// serializerd's own endpoints: `/metrics` and everything under `/-/`. They answer only
/// clients in `admin.allow`, checked against the socket peer.
enum AdminEndpoint: Equatable {
    case health, metrics, routes, events, recent
    /// `/-/failures`, `/-/failures/<request-id>` and `…/body`; the id percent-decoded.
    case failures, failure(String), failureBody(String)
    /// The inspector page and its two assets.
    case ui, uiScript, uiStyle
    /// `/-/tapes` and `/-/tapes/<route>` (the tape as HAR).
    case tapes, tape(String)
    /// `/-/cache` and `/-/cache/<route>`: usage, and purge (DELETE).
    case cache, cacheRoute(String)
    /// `/-/cookies/<route>`: a jar's cookies (values redacted), and clearing it (DELETE).
    case cookies(String)
    /// `/-/inflight`: requests waiting on their upstream now, with bytes so far.
    case inflight
    /// `/-/network` and `/-/network/<route>`: conditions in force; set (PUT) and reset (DELETE).
    case network, networkRoute(String)
    case unknown

    init?(path: String) {
        guard path == "/metrics" || path.hasPrefix("/-/") else { return nil }
        switch path {
        case "/metrics": self = .metrics
        case "/-/health": self = .health
        case "/-/routes": self = .routes
        case "/-/events": self = .events
        case "/-/recent": self = .recent
        case "/-/failures": self = .failures
        case "/-/ui", "/-/ui/": self = .ui
        case "/-/ui/app.js": self = .uiScript
        case "/-/ui/app.css": self = .uiStyle
        case "/-/tapes": self = .tapes
        case "/-/cache": self = .cache
        case "/-/inflight": self = .inflight
        case "/-/network": self = .network
        default:
            if path.hasPrefix("/-/network/") {
                let name = String(path.dropFirst("/-/network/".count))
                self = name.isEmpty || name.contains("/") ? .unknown : .networkRoute(name)
                return
            }
            if path.hasPrefix("/-/cookies/") {
                let name = String(path.dropFirst("/-/cookies/".count))
                self = name.isEmpty || name.contains("/") ? .unknown : .cookies(name)
                return
            }
            if path.hasPrefix("/-/cache/") {
                let name = String(path.dropFirst("/-/cache/".count))
                self = name.isEmpty || name.contains("/") ? .unknown : .cacheRoute(name)
                return
            }
            if path.hasPrefix("/-/tapes/") {
                let name = String(path.dropFirst("/-/tapes/".count))
                self = name.isEmpty || name.contains("/") ? .unknown : .tape(name)
                return
            }
            let rest = path.utf8.dropFirst("/-/failures/".utf8.count)
            guard path.hasPrefix("/-/failures/"), !rest.isEmpty else { self = .unknown; return }
            let parts = rest.split(separator: UInt8(ascii: "/"), maxSplits: 1, omittingEmptySubsequences: false)
            let id = String(decoding: Percent.decode(Array(parts[0])), as: UTF8.self)
            switch parts.count == 1 ? nil : String(decoding: parts[1], as: UTF8.self) {
            case nil: self = id.isEmpty ? .unknown : .failure(id)
            case "body": self = id.isEmpty ? .unknown : .failureBody(id)
            default: self = .unknown
            }
        }
    }
}

extension Worker {
    func serveAdmin(_ endpoint: AdminEndpoint, request: any ClientExchange, target: RequestTarget, writer: ResponseWriter) {
        guard config.allowsAdmin(peer: request.peerAddress, unix: request.peerIsUnixSocket) else {
            writer.problem(.forbidden(host: nil), route: nil)
            return
        }
        if !request.peerIsUnixSocket, let host = request.header("Host"), !Self.answers(host: host, config: config) {
            writer.problem(.forbidden(host: host), route: nil)
            return
        }
        let allowed = endpoint.methods
        if endpoint != .unknown, !allowed.contains(request.method) {
            writer.problem(.methodNotAllowed(allow: allowed), route: nil)
            return
        }
        switch endpoint {
        case .health:
            let body = JSONValue.object([
                ("status", .string("ok")), ("version", .string(ServerVersion.string)),
                ("uptime_seconds", .number(String(Int(Clock.now() - ProcessStart.monotonic)))),
            ])
            writer.sendJSON(NormalizedJSON(body).bytes)
        case .metrics:
            writer.send(status: 200, headers: HeaderFields([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]),
                        body: shared.metrics.render() + Self.tapeMetrics(config.routes) + Self.reachabilityMetrics(config.routes), outcome: .ok)
        case .routes:
            let capture = config.capture
            writer.sendJSON(NormalizedJSON(.object([("routes", .array(config.routes.map { Self.describe($0, capture: capture) }))])).bytes)
        case .recent:
            switch RecentFormat.parse(target.query) {
            case .success(.json):
                var body = Array("{\"events\":[".utf8)
                for (index, event) in shared.hub.recent().enumerated() {
                    if index > 0 { body.append(UInt8(ascii: ",")) }
                    body += event.json
                }
                body += Array("]}".utf8)
                writer.sendJSON(body)
            case .success(.har):
                // Never the client's Host: the URL names serializerd as configured.
                let origin = "http://" + (config.listen.unixPath == nil ? config.listen.description : "localhost")
                writer.send(status: 200, headers: HeaderFields([("Content-Type", "application/json; charset=utf-8"),
                                                   ("Content-Disposition", "attachment; filename=\"serializerd.har\"")]),
                            body: HAR.render(shared.hub.recent(), origin: origin, version: ServerVersion.string, capture: config.capture) { event, sent in
                                // The upstream exchange as a tape entry: `tape import` takes it.
                                let entry = HARCodec.encode(method: sent.method, url: sent.url,
                                                            requestHeaders: HARCodec.each(CapturedExchange.fields(sent.requestLines)),
                                                            requestBody: sent.requestBody.bytes ?? [], status: sent.status,
                                                            responseHeaders: HARCodec.each(CapturedExchange.fields(sent.responseLines)),
                                                            responseBody: sent.responseBody.bytes ?? [], startedAt: event.startedAt,
                                                            duration: event.upstreamDuration ?? 0, capture: self.config.capture,
                                                            httpVersion: event.httpVersion)
                                return try? JSONValue.parse(entry)
                            }, outcome: .ok)
            case .failure(let failure):
                writer.problem(failure, route: nil)
            }
        case .events:
            openStream(request, writer: writer)
        case .failures, .failure, .failureBody:
            serveFailures(endpoint, writer: writer)
        case .ui: writer.sendAsset(InspectorAssets.html, type: "text/html; charset=utf-8")
        case .uiScript: writer.sendAsset(InspectorAssets.javascript, type: "text/javascript; charset=utf-8")
        case .uiStyle: writer.sendAsset(InspectorAssets.css, type: "text/css; charset=utf-8")
        case .tapes:
            let tapes = config.routes.compactMap { route in route.tape.map { (route.name, $0) } }.map { name, tape in
                var fields: [(String, JSONValue)] = [
                    ("route", .string(name)), ("mode", .string(tape.mode.rawValue)), ("record_misses", .bool(tape.recordMisses)),
                    ("entries", .number(String(tape.tape.count))), ("bytes", .number(String(tape.tape.bytes))),
                    ("file", .string(tape.tape.path)), ("href", .string("/-/tapes/" + name)),
                ]
                if let stopped = tape.tape.stopped { fields.append(("recording_stopped", .string(stopped))) }
                return JSONValue.object(fields)
            }
            writer.sendJSON(NormalizedJSON(.object([("tapes", .array(tapes))])).bytes)
        case .tape(let name):
            guard let tape = config.routes.first(where: { $0.name == name })?.tape else {
                return writer.problem(.noRoute("GET /-/tapes/\(name): no route of that name has a tape; GET /-/tapes lists them"), route: nil)
            }
            writer.send(status: 200, headers: HeaderFields([("Content-Type", "application/json; charset=utf-8"),
                                               ("Content-Disposition", "attachment; filename=\"\(name).har\"")]),
                        body: tape.tape.har(), outcome: .ok)
        case .cache, .cacheRoute:
            serveCache(endpoint, method: request.method, writer: writer)
        case .network, .networkRoute:
            serveNetwork(endpoint, request: request, writer: writer)
        case .cookies(let name):
            serveCookies(name, method: request.method, writer: writer)
        case .inflight:
            serveInflight(writer: writer)
        case .unknown:
            writer.problem(.noRoute(request.method + " " + target.path), route: nil)
        }
    }

    /// The DNS-rebinding guard (DESIGN §6): a page whose own name resolves to 127.0.0.1
    /// sends that name as Host, so admin answers only to names no page can claim:
    /// loopback names and addresses, the listen address, and what `admin.hosts` lists.
    /// Any port; names compare case-insensitively, a trailing dot ignored.
    static func answers(host: String, config: ServerConfig) -> Bool {
        guard let name = HostField.name(host), !name.isEmpty else { return false }
        if name == "localhost" || name == config.listen.host.lowercased() || config.adminHosts.contains(name) { return true }
        guard let address = IPAddress(name)?.unmapped else { return false }
        return address.isV6 ? address.bytes == Array(repeating: 0, count: 15) + [1] : address.bytes[0] == 127
    }

    /// `serializerd_tape_entries{route}`: each tape's recordings, read at scrape time.
    static func tapeMetrics(_ routes: [Route]) -> [UInt8] {
        let tapes = routes.compactMap { route in route.tape.map { (route.name, $0.tape.count) } }
        guard !tapes.isEmpty else { return [] }
        var text = "# HELP serializerd_tape_entries Recordings on each route's tape.\n# TYPE serializerd_tape_entries gauge\n"
        for (name, count) in tapes { text += "serializerd_tape_entries{route=\"\(name)\"} \(count)\n" }
        return Array(text.utf8)
    }

    /// `serializerd_upstream_up{route}`: 1 reachable, 0 unreachable, absent while unknown.
    static func reachabilityMetrics(_ routes: [Route]) -> [UInt8] {
        let known = routes.compactMap { route -> (String, Int)? in
            switch route.reachability.state {
            case .unknown: nil
            case .reachable: (route.name, 1)
            case .unreachable: (route.name, 0)
            }
        }
        var text = "# HELP serializerd_upstream_up Whether each route's upstream is reachable (absent while unknown).\n# TYPE serializerd_upstream_up gauge\n"
        for (name, up) in known { text += "serializerd_upstream_up{route=\"\(name)\"} \(up)\n" }
        return Array(text.utf8)
    }

    static func describe(_ route: Route, capture: Redaction) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(route.name)),
            ("prefix", .string(route.prefix)),
            ("methods", route.methods.map { .array($0.sorted().map(JSONValue.string)) } ?? .null),
            ("host", route.host.map(JSONValue.string) ?? .null),
            ("upstream", .string(capture.url(route.upstream.description))),
            ("timeout_seconds", .number(NumberText.shortest(route.timeout))),
            ("connect_timeout_seconds", .number(NumberText.shortest(route.connectTimeout))),
            ("follow_redirects", .number(String(route.followRedirects))),
            ("headers", .array(route.headers.map { .string($0.0) })),   // names only: values may be secrets
            ("request_serializer", .string(route.requestSerializerName)),
            ("response_serializer", .string(route.response.serializer.rawValue)),
        ]
        if let serializers = route.response.serializers { members.append(("serializers", .array(serializers.map { .string($0.rawValue) }))) }
        members.append(("output", .object([
            ("envelope", .bool(route.output.envelope)), ("canonical", .bool(route.output.canonical)),
            ("numbers", .string(route.output.effectiveNumbers.rawValue)),
            ("on_failure", .string(route.output.onFailure.rawValue)),
        ])))
        members.append(("tape", .string(route.tape?.mode.rawValue ?? RouteTape.Mode.off.rawValue)))
        members.append(("cache", route.cache.map { JSONValue.string($0.policy.rawValue) } ?? .null))
        let reach = route.reachability
        members.append(("reachability", .object([
            ("state", .string(reach.state.name)),
            ("since", reach.since.map { .string(UTCTimestamp.format(unixSeconds: $0, fraction: .milliseconds)) } ?? .null),
            ("failing_fast", .bool(reach.failsFast)),
            ("health", route.health.map { .object([("path", .string(capture.url($0.path))), ("interval_seconds", .number(NumberText.shortest($0.interval)))]) } ?? .null),
        ])))
        members.append(("tls", route.tls.map { tls in JSONValue.object([
            ("verify", .bool(tls.verify)), ("ca_file", .bool(tls.caBundle != nil)),
            ("pinned_public_keys", .number(String(tls.pinnedPublicKeys.count))), ("client_certificate", .bool(tls.clientCertificate != nil)),
            ("min_version", tls.minVersion.map { .string($0.rawValue) } ?? .null),
        ]) } ?? .null))
        return .object(members)
    }
}

extension ResponseWriter {
    func sendJSON(_ body: [UInt8]) {
        send(status: 200, headers: HeaderFields([("Content-Type", "application/json; charset=utf-8")]), body: body, outcome: .ok)
    }

    /// One of the inspector's files, under its strict Content-Security-Policy.
    func sendAsset(_ text: String, type: String) {
        send(status: 200, headers: HeaderFields([("Content-Type", type), ("Content-Security-Policy", InspectorAssets.contentSecurityPolicy),
                                    ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                                    ("Cache-Control", "no-cache")]),
             body: Array(text.utf8), outcome: .ok)
    }
}

/// When the server started; `Server.run` reads it first so it is set at startup.
enum ProcessStart {
    static let monotonic = Clock.now()
}
