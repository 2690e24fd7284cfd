import EventLoop
import HTTPCore
import Network
import Serializers

extension Worker {
    /// `GET /-/network[/<route>]`: each route's configured and runtime conditions;
    /// `PUT /-/network`: a runtime change; `DELETE`: back to the configuration.
    func serveNetwork(_ r: AdminRequest) {
        let request = r.exchange, writer = r.writer
        let overrides = pipeline.networkOverrides
        let now = pipeline.clock.wall()
        var only: String?
        if !r.parameter.isEmpty {
            let name = r.parameter
            guard config.routes.contains(where: { $0.name == name }) else {
                return writer.problem(.noRoute("\(request.method) /-/network/\(name): no route of that name; GET /-/routes lists them"), route: nil)
            }
            only = name
        }
        switch request.method {
        case "PUT":
            let change: NetworkChange
            do throws(ConfigError) {
                change = try NetworkChange.parse(request.body, routeNames: Set(config.routes.map(\.name)))
            } catch {
                return writer.problem(.badRequest(error.description), route: nil)
            }
            overrides.set(change.route, change.settings, expiresAt: now + change.seconds)
            only = change.route
        case "DELETE":
            let removed = overrides.remove(only)
            var members: [(String, JSONValue)] = [("reset", .number(String(removed)))]
            if let only { members.insert(("route", .string(only)), at: 0) }
            return writer.sendJSON(NormalizedJSON(.object(members)).bytes)
        default:
            break
        }
        let runtime = overrides.all(now: now)
        var routes: [JSONValue] = []
        for route in config.routes where only == nil || route.name == only {
            let entry = runtime[route.name]
            guard only != nil || route.network != nil || entry != nil else { continue }
            var members: [(String, JSONValue)] = [
                ("route", .string(route.name)),
                ("configured", route.network.map(Self.describe) ?? .null),
            ]
            if let entry, case .object(var described) = Self.describe(entry.settings) {
                described.append(("expires_at", .string(UTCTimestamp.format(unixSeconds: entry.expiresAt, fraction: .milliseconds))))
                described.append(("expires_in_seconds", .number(String(Int((entry.expiresAt - now).rounded(.up))))))
                members.append(("runtime", .object(described)))
            } else {
                members.append(("runtime", .null))
            }
            routes.append(.object(members))
        }
        writer.sendJSON(NormalizedJSON(.object([
            ("routes", .array(routes)),
            ("shaped_replies", .number(String(budget.shapedReplies))),
            ("max_active_faults", .number(String(config.limits.maxActiveFaults))),
        ])).bytes)
    }

    /// Settings as `/-/network` shows them: durations in milliseconds, rates in bytes per second.
    static func describe(_ s: NetworkSettings) -> JSONValue {
        func ms(_ seconds: Double) -> JSONValue { .number(String(Int((seconds * 1000).rounded()))) }
        return .object([
            ("latency_ms", ms(s.latency)),
            ("jitter_ms", ms(s.jitter)),
            ("down", s.down.map { .number(String($0)) } ?? .null),
            ("up", s.up.map { .number(String($0)) } ?? .null),
            ("fail_rate", .number(String(s.failRate))),
            ("faults", .array(s.faults.map { .string($0.applied) })),
            ("seed", s.seed.map { .number(String($0)) } ?? .null),
            ("header_control", .bool(s.headerControl)),
            ("chaos", .array(s.chaos.map { .string($0.applied) })),
        ])
    }
}
