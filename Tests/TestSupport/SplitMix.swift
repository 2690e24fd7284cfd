import Network

/// A small seeded generator, so the randomized tests are repeatable: the daemon's own
/// SplitMix64 (`FaultDice`), with a bound.
public struct SplitMix {
    private var dice: FaultDice

    public init(state: UInt64) { dice = FaultDice(seed: state) }

    public mutating func next() -> UInt64 { dice.next() }

    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
