import EventLoop
import HTTPCore
import Resilience
import Serializers
import Tapes
import Telemetry
import Tracing

/// serializerd's own endpoints: `/metrics` and everything under `/-/`. They answer only
/// clients in `admin.allow`, checked against the socket peer, and only to Host names no
/// web page can claim.
extension Worker {
    typealias AdminHandler = @Sendable (Worker) -> (AdminRequest) -> Void

    /// Every admin endpoint: its methods, its path, the handler (in the file of its concern).
    static let admin = AdminRouter<AdminHandler>([
        (["GET", "HEAD"], "/metrics", Worker.serveMetrics),
        (["GET", "HEAD"], "/-/health", Worker.serveHealth),
        (["GET", "HEAD"], "/-/routes", Worker.serveRoutes),
        (["GET", "HEAD"], "/-/events", Worker.serveEvents),
        (["GET", "HEAD"], "/-/recent", Worker.serveRecent),
        (["GET", "HEAD"], "/-/failures", Worker.serveFailureList),
        (["GET", "HEAD"], "/-/failures/*", Worker.serveFailure),
        (["GET", "HEAD"], "/-/failures/*/body", Worker.serveFailureBody),
        (["GET", "HEAD"], "/-/streams/*", Worker.serveStreamEvents),
        (["GET", "HEAD"], "/-/ui", Worker.serveInspector),
        (["GET", "HEAD"], "/-/ui/", Worker.serveInspector),
        (["GET", "HEAD"], "/-/ui/app.js", Worker.serveInspectorScript),
        (["GET", "HEAD"], "/-/ui/app.css", Worker.serveInspectorStyle),
        (["GET", "HEAD"], "/-/tapes", Worker.serveTapes),
        (["GET", "HEAD"], "/-/tapes/*", Worker.serveTape),
        (["GET", "HEAD", "DELETE"], "/-/cache", Worker.serveCache),
        (["GET", "HEAD", "DELETE"], "/-/cache/*", Worker.serveCache),
        (["GET", "HEAD", "DELETE"], "/-/cookies/*", Worker.serveCookies),
        (["GET", "HEAD"], "/-/inflight", Worker.serveInflight),
        (["GET", "HEAD", "PUT", "DELETE"], "/-/network", Worker.serveNetwork),
        (["GET", "HEAD", "DELETE"], "/-/network/*", Worker.serveNetwork),
        (["GET", "HEAD"], "/-/drift", Worker.serveDrift),
        (["GET", "HEAD"], "/-/drift/*", Worker.serveDriftDocument),
    ])

    /// An admin request: refused unless the peer and the Host may use admin, then the
    /// table's handler, a 405 with the table's methods, or a 404.
    func serveAdmin(_ request: any ClientExchange, target: RequestTarget, writer: ResponseWriter) {
        guard config.allowsAdmin(peer: request.peerAddress, unix: request.peerIsUnixSocket) else {
            return writer.problem(.forbidden(host: nil), route: nil)
        }
        if !request.peerIsUnixSocket, let host = request.fields.first("Host"), !Self.answers(host: host, config: config) {
            return writer.problem(.forbidden(host: host), route: nil)
        }
        switch Self.admin.match(method: request.method, path: target.path) {
        case .handler(let handler, let parameter):
            handler(self)(AdminRequest(exchange: request, target: target, writer: writer, parameter: parameter))
        case .methodNotAllowed(let allow):
            writer.problem(.methodNotAllowed(allow: allow), route: nil)
        case .notFound:
            writer.problem(.noRoute(request.method + " " + target.path), route: nil)
        }
    }

    func serveHealth(_ r: AdminRequest) {
        let body = JSONValue.object([
            ("status", .string("ok")), ("version", .string(ServerVersion.string)),
            ("uptime_seconds", .number(String(Int(Clock.now() - ProcessStart.monotonic)))),
        ])
        r.writer.sendJSON(NormalizedJSON(body).bytes)
    }

    func serveMetrics(_ r: AdminRequest) {
        r.writer.send(status: 200, headers: HeaderFields([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]),
                      body: shared.metrics.render() + Self.tapeMetrics(config.routes) + Self.reachabilityMetrics(config.routes)
                          + Self.driftMetrics(config.routes) + Self.queueMetrics(config.routes)
                          + Self.traceMetrics(shared.tracer, on: config.tracing != nil), outcome: .ok)
    }

    func serveRoutes(_ r: AdminRequest) {
        let capture = config.capture, now = pipeline.clock.now()
        r.writer.sendJSON(NormalizedJSON(.object([("routes", .array(config.routes.map { Self.describe($0, capture: capture, now: now) }))])).bytes)
    }

    func serveInspector(_ r: AdminRequest) { r.writer.sendAsset(InspectorAssets.html, type: "text/html; charset=utf-8") }
    func serveInspectorScript(_ r: AdminRequest) { r.writer.sendAsset(InspectorAssets.javascript, type: "text/javascript; charset=utf-8") }
    func serveInspectorStyle(_ r: AdminRequest) { r.writer.sendAsset(InspectorAssets.css, type: "text/css; charset=utf-8") }

    /// `GET /-/recent`: the last completion events, as JSON or as a HAR (`?format=har`).
    func serveRecent(_ r: AdminRequest) {
        let writer = r.writer
        switch RecentFormat.parse(r.target.query) {
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
                                                        requestHeaders: HeaderFields(lines: sent.requestLines).forEach,
                                                        requestBody: sent.requestBody.bytes ?? [], status: sent.status,
                                                        responseHeaders: HeaderFields(lines: sent.responseLines).forEach,
                                                        responseBody: sent.responseBody.bytes ?? [], startedAt: event.startedAt,
                                                        duration: event.upstreamDuration ?? 0, capture: self.config.capture,
                                                        httpVersion: event.httpVersion)
                            return try? JSONValue.parse(entry)
                        }, outcome: .ok)
        case .failure(let failure):
            writer.problem(failure, route: nil)
        }
    }

    /// `GET /-/tapes`: each route's tape, its mode and size.
    func serveTapes(_ r: AdminRequest) {
        let tapes = config.routes.compactMap { route in route.tape.map { (route.name, $0) } }.map { name, tape in
            var fields: [(String, JSONValue)] = [
                ("route", .string(name)), ("mode", .string(tape.mode.rawValue)), ("record_misses", .bool(tape.recordMisses)),
                ("entries", .number(String(tape.tape.count))), ("bytes", .number(String(tape.tape.bytes))),
                ("file", .string(tape.tape.path)), ("href", .string("/-/tapes/" + name)),
            ]
            if let stopped = tape.tape.stopped { fields.append(("recording_stopped", .string(stopped))) }
            return JSONValue.object(fields)
        }
        r.writer.sendJSON(NormalizedJSON(.object([("tapes", .array(tapes))])).bytes)
    }

    /// `GET /-/tapes/<route>`: the route's tape as HAR.
    func serveTape(_ r: AdminRequest) {
        let name = r.parameter
        guard let tape = config.routes.first(where: { $0.name == name })?.tape else {
            return r.writer.problem(.noRoute("GET /-/tapes/\(name): no route of that name has a tape; GET /-/tapes lists them"), route: nil)
        }
        r.writer.send(status: 200, headers: HeaderFields([("Content-Type", "application/json; charset=utf-8"),
                                                          ("Content-Disposition", "attachment; filename=\"\(name).har\"")]),
                      body: tape.tape.har(), outcome: .ok)
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

    /// `serializerd_spans_exported_total` and `serializerd_spans_dropped_total`, while
    /// tracing is on or once it has been.
    static func traceMetrics(_ tracer: TraceExporter, on: Bool) -> [UInt8] {
        let (exported, dropped) = (tracer.exported, tracer.dropped)
        guard on || exported + dropped > 0 else { return [] }
        return Array("""
            # HELP serializerd_spans_exported_total Spans the OTLP collector took.
            # TYPE serializerd_spans_exported_total counter
            serializerd_spans_exported_total \(exported)
            # HELP serializerd_spans_dropped_total Spans dropped: the export queue full, or a batch the collector refused or did not answer in time.
            # TYPE serializerd_spans_dropped_total counter
            serializerd_spans_dropped_total \(dropped)

            """.utf8)
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

    /// Each route's queue now, all workers together (read from its gate and throttle): the
    /// depth and slots of `limits` routes; the waits and the requests held back by a
    /// bucket or an upstream's pause, of every route that had any.
    static func queueMetrics(_ routes: [Route]) -> [UInt8] {
        var text = ""
        let limited = routes.filter { $0.limits != nil }
        if !limited.isEmpty {
            text += "# HELP serializerd_queue_depth Requests waiting in each route's queue (limits): for an upstream slot, a token or the upstream's pause.\n# TYPE serializerd_queue_depth gauge\n"
            for route in limited { text += "serializerd_queue_depth{route=\"\(route.name)\"} \((route.gate?.counts.waiting ?? 0) + route.throttle.delayed)\n" }
        }
        let gated = routes.compactMap { route in route.gate.map { (route.name, $0.counts) } }
        if !gated.isEmpty {
            text += "# HELP serializerd_upstream_slots_in_use Upstream requests in flight under each route's limits.concurrency.\n# TYPE serializerd_upstream_slots_in_use gauge\n"
            for (name, counts) in gated { text += "serializerd_upstream_slots_in_use{route=\"\(name)\"} \(counts.inFlight)\n" }
        }
        let waits = routes.map { ($0.name, $0.throttle.waitHistogram) }.filter { $0.1.count > 0 }
        if !waits.isEmpty {
            text += "# HELP serializerd_queue_wait_seconds Time requests spent in each route's queue before going upstream (or giving up).\n# TYPE serializerd_queue_wait_seconds histogram\n"
            for (name, histogram) in waits {
                var cumulative: UInt64 = 0
                for (bound, count) in zip(WaitHistogram.bounds, histogram.buckets) {
                    cumulative += count
                    text += "serializerd_queue_wait_seconds_bucket{route=\"\(name)\",le=\"\(NumberText.shortest(bound))\"} \(cumulative)\n"
                }
                text += "serializerd_queue_wait_seconds_bucket{route=\"\(name)\",le=\"+Inf\"} \(histogram.count)\n"
                text += "serializerd_queue_wait_seconds_sum{route=\"\(name)\"} \(NumberText.shortest(histogram.sum))\n"
                text += "serializerd_queue_wait_seconds_count{route=\"\(name)\"} \(histogram.count)\n"
            }
        }
        let retried = routes.compactMap { route in route.retries.map { (route.name, $0.counts) } }.filter { !$0.1.isEmpty }
        if !retried.isEmpty {
            text += "# HELP serializerd_retries_total Requests each route's retry sent again, by the outcome retried on.\n# TYPE serializerd_retries_total counter\n"
            for (name, counts) in retried {
                for (reason, count) in counts.sorted(by: { $0.key < $1.key }) {
                    text += "serializerd_retries_total{route=\"\(name)\",reason=\"\(reason)\"} \(count)\n"
                }
            }
        }
        let breakers = routes.compactMap { route in route.breaker.map { (route.name, $0.state) } }
        if !breakers.isEmpty {
            text += "# HELP serializerd_breaker_state Each route's breaker: 0 closed, 1 half-open, 2 open.\n# TYPE serializerd_breaker_state gauge\n"
            for (name, state) in breakers { text += "serializerd_breaker_state{route=\"\(name)\"} \(state.rawValue)\n" }
        }
        let held = routes.map { ($0.name, $0.throttle.heldCounts) }.filter { $0.1.bucket + $0.1.upstream > 0 }
        if !held.isEmpty {
            text += "# HELP serializerd_rate_limited_total Requests held back (delayed or refused) by each route's limits.rate (bucket) or its upstream's pause (upstream).\n# TYPE serializerd_rate_limited_total counter\n"
            for (name, counts) in held {
                text += "serializerd_rate_limited_total{route=\"\(name)\",source=\"bucket\"} \(counts.bucket)\n"
                text += "serializerd_rate_limited_total{route=\"\(name)\",source=\"upstream\"} \(counts.upstream)\n"
            }
        }
        return Array(text.utf8)
    }

    static func describe(_ route: Route, capture: Redaction, now: Double) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(route.name)),
            ("prefix", .string(route.prefix)),
            ("methods", route.methods.map { .array($0.sorted().map(JSONValue.string)) } ?? .null),
            ("host", route.host.map(JSONValue.string) ?? .null),
            ("upstream", .string(capture.url(route.upstream.description))),
            ("timeout_seconds", .number(NumberText.shortest(route.timeout))),
            ("connect_timeout_seconds", .number(NumberText.shortest(route.connectTimeout))),
            ("follow_redirects", .number(String(route.followRedirects))),
            ("headers", .array(route.headers.pairs.map { .string($0.0) })),   // names only: values may be secrets
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
        // The contract's file as the config names it, its mode when it checks, and drift.
        members.append(("contract", route.contract.map { c in JSONValue.object([
            ("file", c.source == nil ? .null : .string(c.file)), ("mode", c.source == nil ? .null : .string(c.mode.rawValue)),
            ("drift_after", c.driftAfter.map { .number(String($0)) } ?? .null),
        ]) } ?? .null))
        // `limits` and the queue's state now, all workers together: slots in flight, and
        // requests waiting for one or for their turn (the upstream's pause, a token).
        members.append(("limits", route.limits.map { l in
            let (inFlight, waiting) = route.gate?.counts ?? (0, 0)
            return JSONValue.object([
                ("concurrency", l.concurrency.map { .number(String($0)) } ?? .null),
                ("rate", l.rate.map { .string($0.description) } ?? .null), ("queue", .number(String(l.queue))),
                ("queue_timeout_seconds", .number(NumberText.shortest(l.queueTimeout))),
                ("in_flight", .number(String(inFlight))), ("waiting", .number(String(waiting + route.throttle.delayed))),
            ])
        } ?? .null))
        members.append(("retry", route.retry.map { r in JSONValue.object([
            ("attempts", .number(String(r.attempts))), ("on", .array(r.on.map(\.description).sorted().map(JSONValue.string))),
            ("backoff_seconds", .number(NumberText.shortest(r.backoff))), ("max_backoff_seconds", .number(NumberText.shortest(r.maxBackoff))),
            ("budget_percent", .number(NumberText.shortest(r.budget))),
        ]) } ?? .null))
        members.append(("breaker", route.breaker.map { b in JSONValue.object([
            ("state", .string(b.state.name)), ("failures", .number(String(b.failures))),
            ("window_seconds", .number(NumberText.shortest(b.window))), ("open_seconds", .number(NumberText.shortest(b.openSeconds))),
        ]) } ?? .null))
        // A pause the upstream asked for, on any route: seconds still to run.
        members.append(("paused_seconds", .number(NumberText.shortest((route.throttle.pause(at: now) * 1000).rounded() / 1000))))
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
