import Dispatch
import Resilience
import Synchronization
import Testing

@Suite struct UpstreamGateTests {
    final class Woken: Sendable {
        let ids = Mutex<[UInt64]>([])
        var all: [UInt64] { ids.withLock { $0 } }
        func wake(_ id: UInt64) { ids.withLock { $0.append(id) } }
    }

    @Test func slotsThenAFIFOQueueThenFull() {
        let gate = UpstreamGate(limit: 2, queue: 2)
        let woken = Woken()
        let first = gate.enter(wake: woken.wake), second = gate.enter(wake: woken.wake)
        let third = gate.enter(wake: woken.wake), fourth = gate.enter(wake: woken.wake)
        let fifth = gate.enter(wake: woken.wake)
        #expect(first == .go && second == .go && fifth == .full)
        guard case .queued(let a) = third, case .queued(let b) = fourth else { Issue.record("not queued"); return }
        #expect(gate.counts == (2, 2))
        // Leaving hands the slot to the oldest waiter: still two in flight.
        gate.leave()
        #expect(woken.all == [a] && gate.counts == (2, 1))
        gate.leave()
        #expect(woken.all == [a, b] && gate.counts == (2, 0))
        gate.leave()
        gate.leave()
        #expect(gate.counts == (0, 0))
        // Once a queue formed, newcomers never pass it.
        #expect(gate.enter(wake: woken.wake) == .go)
    }

    @Test func aCancelledPlaceIsGoneAndAHandedSlotIsNotCancelled() {
        let gate = UpstreamGate(limit: 1, queue: 4)
        let woken = Woken()
        _ = gate.enter(wake: woken.wake)
        guard case .queued(let a) = gate.enter(wake: woken.wake), case .queued(let b) = gate.enter(wake: woken.wake) else {
            Issue.record("not queued"); return
        }
        #expect(gate.cancel(a))
        #expect(!gate.cancel(a))
        gate.leave()
        #expect(woken.all == [b])
        // b was handed the slot: too late to cancel, the slot is its to give back.
        #expect(!gate.cancel(b) && gate.counts == (1, 0))
    }

    @Test func aReloadWithMoreRoomWakesWaitersAtOnce() {
        let gate = UpstreamGate(limit: 1, queue: 4)
        let woken = Woken()
        _ = gate.enter(wake: woken.wake)
        _ = gate.enter(wake: woken.wake)
        _ = gate.enter(wake: woken.wake)
        gate.update(limit: 3, queue: 4)
        #expect(woken.all.count == 2 && gate.counts == (3, 0))
        // Less room takes nothing back: those in flight finish.
        gate.update(limit: 1, queue: 0)
        #expect(gate.enter(wake: woken.wake) == .full)
        for _ in 0..<3 { gate.leave() }
        #expect(gate.counts == (0, 0) && gate.enter(wake: woken.wake) == .go)
    }

    @Test func manyThreadsNeverHoldMoreThanTheLimit() {
        let gate = UpstreamGate(limit: 3, queue: 10_000)
        let held = Atomic<Int>(0), most = Atomic<Int>(0)
        let group = DispatchGroup()
        @Sendable func run() {
            let now = held.wrappingAdd(1, ordering: .relaxed).newValue
            _ = most.max(now, ordering: .relaxed)
            _ = held.wrappingSubtract(1, ordering: .relaxed)
            gate.leave()
            group.leave()
        }
        for _ in 0..<2_000 {
            group.enter()
            DispatchQueue.global().async {
                switch gate.enter(wake: { _ in DispatchQueue.global().async { run() } }) {
                case .go: run()
                case .queued: break
                case .full: group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(most.load(ordering: .relaxed) <= 3 && most.load(ordering: .relaxed) >= 1)
        #expect(gate.counts == (0, 0))
    }
}
