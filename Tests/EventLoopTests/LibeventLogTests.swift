@testable import EventLoop
import Synchronization
import Testing

@Suite struct LibeventLogTests {
    @Test func messagesAreRoutedAtMostOneASecondWithTheRestCounted() {
        let seen = Mutex<[(String, String, Int)]>([])
        LibeventLog.route { severity, message, suppressed in seen.withLock { $0.append((severity, message, suppressed)) } }
        for k in 0..<50 { LibeventLog.deliver(severity: 2, message: "Error from accept() call: \(k)") }
        let lines = seen.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.0 == "warning" && lines.first?.1 == "Error from accept() call: 0" && lines.first?.2 == 0)
    }
}
