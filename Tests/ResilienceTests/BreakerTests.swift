import Resilience
import Testing

@Suite struct BreakerTests {
    @Test func failuresInARowOpenItAndSuccessResetsTheCount() {
        var breaker = Breaker(failures: 3, window: 10, open: 30)
        var changes: [Breaker.State?] = []
        for (at, failed) in [(0.0, true), (1, true), (2, false), (3, true), (4, true)] {
            changes.append(breaker.record(failed: failed, now: at))
        }
        #expect(changes == [nil, nil, nil, nil, nil])   // the success broke the first row
        let admitted = breaker.admit(now: 4)
        let opened = breaker.record(failed: true, now: 5)
        let refused = breaker.admit(now: 6)
        #expect(admitted == .pass && opened == .open && breaker.state == .open && refused == .refuse(retryAfter: 29))
    }

    @Test func aRowSpreadBeyondTheWindowStartsOver() {
        var breaker = Breaker(failures: 3, window: 10, open: 30)
        // The third comes 10.5 s after the first: a new row begins there.
        let changes = [0, 5, 10.5, 11, 12].map { breaker.record(failed: true, now: $0) }
        #expect(changes == [nil, nil, nil, nil, .open])
    }

    @Test func halfOpenLetsOneProbeThroughAndItsOutcomeDecides() {
        var breaker = Breaker(failures: 1, window: 10, open: 30)
        let opened = breaker.record(failed: true, now: 0)
        let early = breaker.admit(now: 29.5)
        let probe = breaker.admit(now: 30)
        #expect(opened == .open && early == .refuse(retryAfter: 0.5) && probe == .probe && breaker.state == .halfOpen)
        // While the probe is out, everyone else is refused; a request let through before
        // it opened answers now and decides nothing.
        let other = breaker.admit(now: 30.1)
        let straggler = breaker.record(failed: false, now: 30.2)
        let reopened = breaker.record(failed: true, probe: true, now: 31)
        let refused = breaker.admit(now: 40)
        #expect(other == .refuse(retryAfter: 0) && straggler == nil && reopened == .open && refused == .refuse(retryAfter: 21))
        let secondProbe = breaker.admit(now: 61)
        let closed = breaker.record(failed: false, probe: true, now: 61.5)
        let passes = breaker.admit(now: 61.6)
        #expect(secondProbe == .probe && closed == .closed && passes == .pass)
        // Closed again, it takes a whole new row to open.
        let again = breaker.record(failed: true, now: 62)
        #expect(again == .open)
    }

    @Test func anAbandonedProbeLetsTheNextOneThrough() {
        var breaker = Breaker(failures: 1, window: 10, open: 5)
        breaker.record(failed: true, now: 0)
        let first = breaker.admit(now: 5)
        breaker.abandonProbe()
        let second = breaker.admit(now: 5.1)
        #expect(first == .probe && second == .probe && breaker.state == .halfOpen)
    }

    @Test func answersOfRequestsSentBeforeItOpenedChangeNothing() {
        var breaker = Breaker(failures: 2, window: 10, open: 30)
        breaker.record(failed: true, now: 0)
        let opened = breaker.record(failed: true, now: 0.5)
        let late = [breaker.record(failed: true, now: 1), breaker.record(failed: false, now: 1)]
        let refused = breaker.admit(now: 2)
        #expect(opened == .open && late == [nil, nil] && breaker.state == .open && refused == .refuse(retryAfter: 28.5))
        #expect(Breaker.State.halfOpen.rawValue == 1 && Breaker.State.open.rawValue == 2 && Breaker.State.halfOpen.name == "half_open")
    }
}
