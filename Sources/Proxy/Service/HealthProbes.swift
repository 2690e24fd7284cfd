import EventLoop
import HTTPCore
import Logging
import Serializers
import Telemetry
import Upstream

/// The routes' active probes (`health:`, DESIGN §6), on the main thread's loop with a
/// session of their own: GET the health URL every interval; an answer below 500 is
/// success, no answer (refused, timeout, too many redirects) or a 5xx a failure.
final class HealthProbes {
    private let loop: EventLoop
    private let session: SessionManager
    private var timers: [Timer] = []
    /// Probes in flight, by route: a probe still waiting is not sent again.
    private var pending: Set<String> = []

    init(loop: EventLoop, budget: ProcessBudget) throws(EventLoopError) {
        self.loop = loop
        session = try SessionManager(loop: loop, budget: budget)
    }

    /// (Re)starts one timer per route with `health`; a reload calls it again.
    func apply(_ routes: [Route], maxResponseBytes: Int) {
        for timer in timers { timer.cancel() }
        timers.removeAll()
        for route in routes {
            guard let health = route.health else { continue }
            let timer = loop.makeTimer(repeating: true) { [unowned self] in self.probe(route, health, maxResponseBytes: maxResponseBytes) }
            timer.schedule(after: health.interval)
            timers.append(timer)
            probe(route, health, maxResponseBytes: maxResponseBytes)
        }
    }

    private func probe(_ route: Route, _ health: RouteHealth, maxResponseBytes: Int) {
        guard pending.insert(route.name).inserted else { return }
        var headers = HeaderFields()
        headers.append(contentsOf: route.headers)
        let request = UpstreamRequest(url: health.url, method: "GET", headers: headers, body: [], timeout: min(route.timeout, health.interval),
                                      connectTimeout: min(route.connectTimeout, health.interval), followRedirects: route.followRedirects,
                                      maxResponseBytes: min(maxResponseBytes, 1 << 20), tls: route.tls, httpVersion: route.httpVersion)
        session.start(request) { [unowned self] result in
            self.pending.remove(route.name)
            switch result {
            case .success(let reply) where reply.status < 500:
                route.reachability.probed(success: true, detail: "the health probe got \(reply.status)", now: Clock.wall())
            case .success(let reply):
                route.reachability.probed(success: false, detail: "the health probe got \(reply.status)", now: Clock.wall())
            case .failure(let failure):
                route.reachability.probed(success: false, detail: "the health probe failed: \(failure)", now: Clock.wall())
            }
        }
    }

    func close() {
        for timer in timers { timer.cancel() }
        timers.removeAll()
        session.close()
    }
}

extension Reachability.Change {
    /// The `reachability_changed` event's JSON (`/-/events`).
    var json: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("route", .string(route)), ("from", .string(from.name)), ("to", .string(to.name)),
            ("at", .string(UTCTimestamp.format(unixSeconds: at, fraction: .milliseconds))), ("by", .string(by)), ("detail", .string(detail)),
        ]
        if suppressed > 0 { members.append(("suppressed", .number(String(suppressed)))) }
        return NormalizedJSON(.object(members)).bytes
    }
}
