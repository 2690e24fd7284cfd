@testable import Proxy
import Testing

/// The network stage alone: the plan it notes on the context, and the faults it answers.
@Suite struct NetworkStageTests {
    static let routes = """
          - name: fail
            match: { prefix: /f/ }
            upstream: {stub}
            network: { fail_rate: 1, faults: [{status: 503}] }
          - name: slow
            match: { prefix: /s/ }
            upstream: {stub}
            network: { latency: 100ms, down: 50KiB }
          - name: plain
            match: { prefix: /p/ }
            upstream: {stub}

        """

    @Test func aFaultThatNeedsNoUpstreamRefusesTheRequest() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, exchange) = try harness.context("/f/json", route: "fail")
        let step = try harness.run(NetworkStage(), context)
        guard case .refused(let failure) = step else { Issue.record("expected a refusal, got \(step.name)"); return }
        #expect(failure.clientStatus == 503 && failure.typeSuffix == "injected-fault")
        #expect(context.network?.appliedText == "status=503")
        // The stage only decides: the pipeline sends the refusal.
        #expect(exchange.replies.isEmpty)
    }

    @Test func conditionsArePlannedAndTheRequestPassesOn() throws {
        let harness = try StageHarness(routes: Self.routes)
        let (context, _) = try harness.context("/s/json", route: "slow")
        #expect(try harness.run(NetworkStage(), context).name == "passed")
        let shaping = try #require(context.network?.shaping)
        #expect(shaping.delay == 0.1 && shaping.bytesPerSecond == 50 << 10)
        #expect(context.network?.appliedText == "latency=100ms, down=51200")
    }

    @Test func onlyARouteWithConditionsHasTheStage() throws {
        let harness = try StageHarness(routes: Self.routes)
        #expect(try harness.stageNames("slow").first == "NetworkStage")
        #expect(try harness.stageNames("plain") == ["RequestSerializationStage", "WebSocketStage", "StreamStage", "QueueStage", "UpstreamStage"])
        #expect(try harness.route("plain").stagesUnderRuntimeNetwork.first is NetworkStage)
    }
}
