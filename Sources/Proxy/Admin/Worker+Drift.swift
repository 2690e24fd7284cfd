import Contracts
import HTTPCore
import Serializers

extension Worker {
    /// `GET /-/drift`: each drift-learning route's totals, changes by kind, and the
    /// changes reported (newest last, at most `RouteShapes.recentLimit` a route).
    func serveDrift(_ r: AdminRequest) {
        let routes = config.routes.compactMap { route -> JSONValue? in
            guard let shapes = route.contract?.shapes, let after = route.contract?.driftAfter else { return nil }
            let s = shapes.summary
            return .object([
                ("route", .string(route.name)), ("drift_after", .number(String(after))),
                ("endpoints", .number(String(s.endpoints))), ("answers", .number(String(s.answers))),
                ("pointers", .number(String(s.pointers))),
                ("unlearned", .object([("answers", .number(String(s.unlearnedAnswers))), ("pointers", .number(String(s.unlearnedPointers)))])),
                ("counts", .object(s.counts.map { ($0.0.rawValue, .number(String($0.1))) })),
                ("changes", .array(s.recent.map { $0.json(at: UTCTimestamp.format(unixSeconds: $0.at, fraction: .milliseconds)) })),
            ])
        }
        r.writer.sendJSON(NormalizedJSON(.object([("routes", .array(routes))])).bytes)
    }

    /// `GET /-/drift/<route>`: what the route's answers taught, as an OpenAPI 3.1 document
    /// (what `serializerd contract learn` makes of a tape).
    func serveDriftDocument(_ r: AdminRequest) {
        guard let shapes = config.routes.first(where: { $0.name == r.parameter })?.contract?.shapes else {
            return r.writer.problem(.noRoute("GET /-/drift/\(r.parameter): no route of that name learns shapes (contract: {drift: true})"), route: nil)
        }
        r.writer.sendJSON(NormalizedJSON(shapes.document(title: r.parameter)).bytes)
    }

    /// `serializerd_shape_drift_total{route,kind}`: changes reported, every kind of every
    /// drift-learning route (zeros included, so a rate starts at the first scrape).
    static func driftMetrics(_ routes: [Route]) -> [UInt8] {
        let learning = routes.compactMap { route in route.contract?.shapes.map { (route.name, $0.summary.counts) } }
        guard !learning.isEmpty else { return [] }
        var text = "# HELP serializerd_shape_drift_total Shape changes reported, by route and kind.\n# TYPE serializerd_shape_drift_total counter\n"
        for (name, counts) in learning {
            for (kind, count) in counts { text += "serializerd_shape_drift_total{route=\"\(name)\",kind=\"\(kind.rawValue)\"} \(count)\n" }
        }
        return Array(text.utf8)
    }
}
