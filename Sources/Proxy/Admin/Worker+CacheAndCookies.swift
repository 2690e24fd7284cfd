import Cache
import HTTPCore
import Serializers
import Telemetry

extension Worker {
    /// `GET /-/cookies/<route>`: the jar's cookies, names and domains, never values;
    /// `DELETE`: forget them all.
    func serveCookies(_ r: AdminRequest) {
        let name = r.parameter, method = r.method, writer = r.writer
        guard let jar = config.routes.first(where: { $0.name == name })?.cookies else {
            return writer.problem(.noRoute("\(method) /-/cookies/\(name): no route of that name keeps a cookie jar (cookies: jar)"), route: nil)
        }
        if method == "DELETE" {
            return writer.sendJSON(NormalizedJSON(.object([("route", .string(name)), ("cleared", .number(String(jar.clear())))])).bytes)
        }
        let cookies = jar.cookies().map { cookie in
            JSONValue.object([
                ("name", .string(cookie.name)), ("value", .string(Redaction.marker)), ("domain", .string(cookie.domain)),
                ("path", .string(cookie.path)), ("secure", .bool(cookie.secure)),
                ("expires", cookie.expires == 0 ? .null : .string(UTCTimestamp.format(unixSeconds: Double(cookie.expires), fraction: .trimmedMilliseconds))),
            ])
        }
        writer.sendJSON(NormalizedJSON(.object([("route", .string(name)), ("cookies", .array(cookies))])).bytes)
    }

    /// `GET /-/cache[/<route>]`: entries, bytes and results by route; `DELETE`: purge.
    func serveCache(_ r: AdminRequest) {
        let name = r.parameter.isEmpty ? nil : r.parameter, method = r.method, writer = r.writer
        let usage = cache.store.usage()
        if let name, !config.routes.contains(where: { $0.name == name }), usage.byRoute[name] == nil {
            return writer.problem(.noRoute("\(method) /-/cache/\(name): no route of that name has cache entries; GET /-/cache lists them"),
                                  route: nil)
        }
        if method == "DELETE" {
            let purged = cache.store.purge(route: name)
            var members: [(String, JSONValue)] = [("purged", .number(String(purged)))]
            if let name { members.insert(("route", .string(name)), at: 0) }
            return writer.sendJSON(NormalizedJSON(.object(members)).bytes)
        }
        let counts = shared.metrics.cacheCounts()
        var names = config.routes.filter { $0.cache != nil }.map(\.name)
        for stored in usage.byRoute.keys.sorted() where !names.contains(stored) { names.append(stored) }
        if let name { names = [name] }
        let routes = names.map { route in
            Self.describeCache(route: route, policy: config.routes.first { $0.name == route }?.cache?.policy,
                               usage: usage.byRoute[route] ?? (0, 0), counts: counts[route] ?? [:])
        }
        if let route = routes.first, name != nil { return writer.sendJSON(NormalizedJSON(route).bytes) }
        writer.sendJSON(NormalizedJSON(.object([
            ("max_bytes", .number(String(config.cacheMaxBytes))), ("entries", .number(String(usage.entries))),
            ("bytes", .number(String(usage.bytes))), ("misses_in_flight", .number(String(cache.misses.inFlight))),
            ("routes", .array(routes)),
        ])).bytes)
    }

    /// One route's line: what it stored and how its requests met the cache. `hits` are
    /// answers from the cache (hit, collapsed, revalidated, stale), `misses` requests it
    /// could not answer; the hit ratio is hits among both (bypassed requests not counted).
    static func describeCache(route: String, policy: CachePolicy?, usage: (entries: Int, bytes: Int), counts: [String: UInt64]) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("route", .string(route)), ("policy", policy.map { .string($0.rawValue) } ?? .null),
            ("entries", .number(String(usage.entries))), ("bytes", .number(String(usage.bytes))),
        ]
        let served = ["hit", "collapsed", "revalidated", "stale"].reduce(UInt64(0)) { $0 + (counts[$1] ?? 0) }
        let misses = counts["miss"] ?? 0
        members.append(("hits", .number(String(served))))
        members.append(("misses", .number(String(misses))))
        let consulted = served + misses
        members.append(("hit_ratio", consulted == 0 ? .null : .number(NumberText.shortest((Double(served) / Double(consulted) * 1000).rounded() / 1000))))
        members.append(("results", .object(CacheResult.allCases.map { ($0.rawValue, .number(String(counts[$0.rawValue] ?? 0))) })))
        return .object(members)
    }
}
