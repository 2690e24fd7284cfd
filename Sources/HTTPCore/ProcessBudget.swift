import Synchronization

/// What all workers share and must not exceed together (DESIGN §2 `limits`): open client
/// connections and bytes held in memory for replies — upstream bodies being received
/// plus reply bytes not yet taken by slow clients. Lock-free; the limits follow reloads.
public final class ProcessBudget: Sendable {
    private let connections = Atomic<Int>(0)
    private let buffered = Atomic<Int>(0)
    private let shaped = Atomic<Int>(0)
    private let maxConnectionsValue: Atomic<Int>
    private let maxBufferedValue: Atomic<Int>

    public init(maxConnections: Int, maxBufferedBytes: Int) {
        maxConnectionsValue = Atomic(maxConnections)
        maxBufferedValue = Atomic(maxBufferedBytes)
    }

    public func setLimits(maxConnections: Int, maxBufferedBytes: Int) {
        maxConnectionsValue.store(maxConnections, ordering: .relaxed)
        maxBufferedValue.store(maxBufferedBytes, ordering: .relaxed)
    }

    public var maxConnections: Int { maxConnectionsValue.load(ordering: .relaxed) }
    public var maxBufferedBytes: Int { maxBufferedValue.load(ordering: .relaxed) }

    // MARK: connections

    /// Counts an accepted connection (the cap is checked before accepting).
    public func addConnection() { connections.add(1, ordering: .relaxed) }

    public func closeConnection() { connections.subtract(1, ordering: .relaxed) }

    public var openConnections: Int { connections.load(ordering: .relaxed) }

    // MARK: buffered bytes

    /// Charges `bytes` unless that would pass the limit; false (nothing charged) then.
    public func charge(_ bytes: Int) -> Bool {
        let limit = maxBufferedBytes
        var current = buffered.load(ordering: .relaxed)
        while current + bytes <= limit {
            let (exchanged, original) = buffered.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Charges `bytes` whatever the limit: memory already held, which must be released later.
    public func chargeAnyway(_ bytes: Int) { buffered.add(bytes, ordering: .relaxed) }

    public func release(_ bytes: Int) { buffered.subtract(bytes, ordering: .relaxed) }

    public var bufferedBytes: Int { buffered.load(ordering: .relaxed) }

    /// Over the limit: new requests are refused (503 overloaded) until bytes drain.
    public var isOverloaded: Bool { bufferedBytes >= maxBufferedBytes }

    // MARK: shaped replies

    /// Replies being held or paced by network conditions right now (`limits.max_active_faults`).
    public var shapedReplies: Int { shaped.load(ordering: .relaxed) }

    public func shapingStarted() { shaped.add(1, ordering: .relaxed) }

    public func shapingEnded() { shaped.subtract(1, ordering: .relaxed) }
}
