import HTTPCore
import Network
import Testing

@Suite struct FaultRequestTests {
    @Test func readsConditionsAndOneFault() throws {
        let r = try FaultRequest.parse("latency=800ms; jitter = 20ms;down=50KiB; up=1KB; status=503")
        #expect(r.latency == 0.8)
        #expect(r.jitter == 0.02)
        #expect(r.down == 50 << 10)
        #expect(r.up == 1_000)
        #expect(r.fault == .status(503))
        #expect(try FaultRequest.parse("RESET").fault == .reset)
        #expect(try FaultRequest.parse("timeout;").fault == .timeout)
        #expect(try FaultRequest.parse("truncate").fault == .truncate)
        #expect(try FaultRequest.parse("latency=0").latency == 0)
        #expect(try FaultRequest.parse("") == FaultRequest())
    }

    @Test(arguments: [
        ("status=200", "status needs a code from 400 to 599"),
        ("status=abc", "status needs a code"),
        ("reset; timeout", "more than one fault"),
        ("latency=10", "latency needs a duration"),
        ("latency=-5ms", "latency needs a duration"),
        ("down=0", "down needs bytes per second"),
        ("reset=1", "reset takes no value"),
        ("explode", "unknown fault directive 'explode'"),
        ("=3", "is not a directive name"),
    ])
    func refusesWithAReason(text: String, reason: String) {
        #expect(throws: NetworkSyntaxError.self) { try FaultRequest.parse(text) }
        do { _ = try FaultRequest.parse(text) } catch { #expect(error.description.contains(reason), "\(error)") }
    }

    @Test func boundsTheNumberOfDirectives() {
        let many = Array(repeating: "latency=1ms", count: Directives.maxCount + 1).joined(separator: ";")
        #expect(throws: NetworkSyntaxError("more than 32 directives")) { try FaultRequest.parse(many) }
        #expect((try? FaultRequest.parse(Array(repeating: "latency=1ms", count: Directives.maxCount).joined(separator: ";"))) != nil)
    }

    @Test func requestConditionsOverTheRoutes() {
        var route = NetworkSettings()
        route.latency = 1
        route.down = 100
        var asked = FaultRequest()
        asked.latency = 0.25
        let merged = asked.over(route)
        #expect(merged.latency == 0.25)
        #expect(merged.down == 100)
    }
}

@Suite struct ChaosParsingTests {
    @Test func readsEveryOperation() throws {
        let ops = try ChaosOperation.parse("drop=/a/b; null=/p; string=/n; singleton=/items; html_200; content_type=text/plain")
        #expect(ops.map(\.applied) == ["drop=/a/b", "null=/p", "string=/n", "singleton=/items", "html_200", "content_type=text/plain"])
    }

    @Test func pointersFollowRFC6901() throws {
        #expect(try JSONPointer("/a~1b/~0c/").tokens == ["a/b", "~c", ""])
        #expect(try JSONPointer("/").tokens == [""])
        #expect(throws: NetworkSyntaxError.self) { try JSONPointer("a/b") }
        #expect(throws: NetworkSyntaxError.self) { try JSONPointer("/a~2") }
        #expect(throws: NetworkSyntaxError.self) { try JSONPointer("/a~") }
    }

    @Test func refusesADeepPointer() {
        let deep = String(repeating: "/a", count: 10_000)
        #expect(throws: NetworkSyntaxError("a pointer of more than 64 tokens")) { try JSONPointer(deep) }
        #expect((try? JSONPointer(String(repeating: "/a", count: JSONPointer.maxTokens))) != nil)
    }

    @Test(arguments: ["drop", "drop=", "html_200=1", "content_type=", "content_type=a\u{7}b", "melt=/a"])
    func refusesBadOperations(text: String) {
        #expect(throws: NetworkSyntaxError.self) { try ChaosOperation.parse(text) }
    }
}
