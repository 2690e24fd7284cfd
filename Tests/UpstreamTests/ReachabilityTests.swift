import Synchronization
import Testing
@testable import Upstream

@Suite struct ReachabilityStateTests {
    final class Events: Sendable {
        let list = Mutex<[Reachability.Change]>([])
        var all: [Reachability.Change] { list.withLock { $0 } }
    }

    @Test func twoFailuresInARowThenOneAnswer() {
        let events = Events()
        let cell = Reachability(route: "api") { change in events.list.withLock { $0.append(change) } }
        cell.observe(answered: false, detail: "refused", now: 10)
        #expect(cell.state == .unknown)
        cell.observe(answered: true, detail: "", now: 11)
        cell.observe(answered: false, detail: "refused", now: 12)
        #expect(cell.state == .reachable)
        cell.observe(answered: false, detail: "refused", now: 13)
        #expect(cell.state == .unreachable && cell.since == 13 && !cell.failsFast)
        cell.observe(answered: true, detail: "", now: 14)
        #expect(cell.state == .reachable)
        #expect(events.all.map { "\($0.from.name)>\($0.to.name) \($0.by)" } == ["unknown>reachable requests", "reachable>unreachable requests",
                                                                               "unreachable>reachable requests"])
    }

    @Test func onlyTheProbeFailsRequestsFast() {
        let cell = Reachability(route: "api") { _ in }
        cell.probed(success: false, detail: "503", now: 1)
        #expect(!cell.failsFast && cell.state == .unknown)
        cell.probed(success: false, detail: "503", now: 2)
        #expect(cell.failsFast && cell.state == .unreachable)
        cell.probed(success: true, detail: "200", now: 3)
        #expect(!cell.failsFast && cell.state == .reachable)
    }

    @Test func aFlapEvery10msSendsAnEventASecondAtMost() {
        let events = Events()
        let cell = Reachability(route: "api") { change in events.list.withLock { $0.append(change) } }
        // 300 changes over three seconds.
        for step in 0..<600 {
            let now = Double(step) * 0.005
            cell.probed(success: step % 4 >= 2, detail: "flap", now: now)
        }
        let sent = events.all
        #expect(sent.count >= 3 && sent.count <= 4, "\(sent.count)")
        #expect(sent.dropFirst().allSatisfy { $0.suppressed > 0 })
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1.at - $0.at >= 1 })
    }
}
