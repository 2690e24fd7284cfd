@testable import Proxy
import Testing

/// One stage run in process through a request's context, as the pipeline runs it: no
/// socket, no loop; the proxy's scripted upstream answers when the test lets it.
struct StageHarness {
    let proxy: InProcessProxy

    init(routes: String, top: String = "") throws {
        proxy = try InProcessProxy(routes: routes, top: top)
    }

    var pipeline: RequestPipeline { proxy.worker.pipeline }

    func route(_ name: String) throws -> Route {
        try #require(proxy.config.routes.first { $0.name == name })
    }

    /// A request as routing leaves it for `route`: matched, no stage run yet.
    func context(_ target: String, route name: String, method: String = "GET", headers: [(String, String)] = [],
                 body: [UInt8] = []) throws -> (RequestContext, RecordedExchange) {
        let exchange = RecordedExchange(method, target, headers: [("Host", "127.0.0.1:8080")] + headers, body: body)
        let route = try route(name)
        let context = RequestContext(request: exchange, requestID: "0123456789abcdef", recorder: pipeline.recorder,
                                     clock: pipeline.clock, path: target.prefix(upToByte: UInt8(ascii: "?")))
        context.routed(to: route, stages: route.stages, target: try #require(RequestTarget(target)))
        return (context, exchange)
    }

    /// Runs `stage` for the context's route.
    func run(_ stage: some RequestStage, _ context: RequestContext) throws -> StageStep {
        stage.run(context, route: try #require(context.route), in: pipeline)
    }

    /// The request serializer's stage first (the upstream URL), then `stage`.
    func runSerialized(_ stage: some RequestStage, _ context: RequestContext) throws -> StageStep {
        guard case .passed = try run(RequestSerializationStage(), context) else {
            Issue.record("the request serializer refused the request")
            return .passed
        }
        return try run(stage, context)
    }

    /// The stage kinds of a route, by name, in order.
    func stageNames(_ route: String) throws -> [String] {
        try self.route(route).stages.map { String(describing: type(of: $0)) }
    }
}

extension StageStep {
    var name: String {
        switch self {
        case .answered: "answered"
        case .passed: "passed"
        case .parked: "parked"
        case .refused(let failure): "refused " + failure.typeSuffix
        }
    }
}
