import HTTPCore
import Synchronization

/// The process's response cache (DESIGN §2): every worker sees the same entries. Sharded
/// by key, each shard a least-recently-used list under its own lock, within `maxBytes` in
/// all (each shard a share of it). A key holds at most `maxVariants` variants.
public final class ResponseCache: Sendable {
    public static let maxVariants = 32
    public static let shardCount = 16

    /// Mutex is not copyable: each shard's lock lives in an object of its own.
    final class Locked: Sendable {
        let shard = Mutex(Shard())
    }

    private let shards: [Locked]
    private let budget: Atomic<Int>

    /// `shards`: 16 unless a benchmark compares another number.
    public init(maxBytes: Int, shards count: Int = ResponseCache.shardCount) {
        shards = (0..<max(1, count)).map { _ in Locked() }
        budget = Atomic(max(0, maxBytes))
    }

    /// A reload's `cache.max_bytes`: entries beyond it go at the next store.
    public func setMaxBytes(_ bytes: Int) { budget.store(max(0, bytes), ordering: .relaxed) }

    private func shard(_ key: CacheKey) -> Locked {
        shards[Int(UInt(bitPattern: key.digest) % UInt(shards.count))]
    }

    /// The variant of `key` that `request` selects, most recently stored first; marks the
    /// key used.
    public func lookup(_ key: CacheKey, request: (String) -> String?) -> StoredResponse? { find(key, request: request).response }

    /// The variant `request` selects, and whether the key has any (a `vary-miss` rather
    /// than a `uri-miss`).
    public func find(_ key: CacheKey, request: (String) -> String?) -> (response: StoredResponse?, keyKnown: Bool) {
        shard(key).shard.withLock { shard in
            guard let at = shard.index[key] else { return (nil, false) }
            shard.touch(at)
            return (shard.nodes[at].variants.last { $0.matches(request) }, true)
        }
    }

    /// Entries (variants) and bytes in all: a sum over the shards' running totals.
    public func totals() -> (entries: Int, bytes: Int) {
        var entries = 0, bytes = 0
        for locked in shards {
            locked.shard.withLock { shard in
                entries += shard.entries
                bytes += shard.bytes
            }
        }
        return (entries, bytes)
    }

    /// Stores `response` as a variant of `key` (replacing the one it selects), then evicts
    /// the least recently used keys of its shard until the shard is within its share.
    public func store(_ key: CacheKey, _ response: StoredResponse) {
        let share = budget.load(ordering: .relaxed) / shards.count
        guard response.cost <= share else { return }
        let selects = { (name: String) -> String? in response.vary.firstIndex(of: name).flatMap { response.selecting[$0] } }
        shard(key).shard.withLock { shard in
            if let at = shard.index[key] {
                var variants = shard.nodes[at].variants
                // The variant this one replaces: same Vary names, same selecting values.
                variants.removeAll { $0.vary == response.vary && $0.matches(selects) }
                if variants.count >= Self.maxVariants { variants.removeFirst() }
                variants.append(response)
                shard.replace(at, variants)
                shard.touch(at)
            } else {
                shard.insert(key, [response])
            }
            while shard.bytes > share, shard.tail >= 0 { shard.remove(shard.tail) }
        }
    }

    /// Removes every entry (`route` nil) or those `route` stored; how many variants went.
    @discardableResult
    public func purge(route: String? = nil) -> Int {
        var removed = 0
        for locked in shards {
            locked.shard.withLock { shard in
                for (_, at) in shard.index {
                    let variants = shard.nodes[at].variants
                    let kept = route.map { r in variants.filter { $0.route != r } } ?? []
                    removed += variants.count - kept.count
                    if kept.isEmpty { shard.remove(at) } else if kept.count != variants.count { shard.replace(at, kept) }
                }
            }
        }
        return removed
    }

    /// Entries (variants) and bytes, in all and by the route that stored them.
    public func usage() -> (entries: Int, bytes: Int, byRoute: [String: (entries: Int, bytes: Int)]) {
        var entries = 0, bytes = 0
        var byRoute: [String: (entries: Int, bytes: Int)] = [:]
        for locked in shards {
            locked.shard.withLock { shard in
                for (_, at) in shard.index {
                    for v in shard.nodes[at].variants {
                        entries += 1
                        bytes += v.cost
                        byRoute[v.route, default: (0, 0)].entries += 1
                        byRoute[v.route, default: (0, 0)].bytes += v.cost
                    }
                }
            }
        }
        return (entries, bytes, byRoute)
    }
}

/// One shard: keys in a doubly linked list by last use (head: most recent), kept in an
/// array of nodes with a free list, so use, insertion and eviction are O(1).
struct Shard {
    struct Node {
        var key: CacheKey
        var variants: [StoredResponse]
        var bytes: Int
        var prev = -1, next = -1
    }

    var index: [CacheKey: Int] = [:]
    var nodes: [Node] = []
    var free: [Int] = []
    var head = -1, tail = -1
    var bytes = 0
    var entries = 0

    mutating func unlink(_ at: Int) {
        let (p, n) = (nodes[at].prev, nodes[at].next)
        if p >= 0 { nodes[p].next = n } else { head = n }
        if n >= 0 { nodes[n].prev = p } else { tail = p }
        nodes[at].prev = -1
        nodes[at].next = -1
    }

    mutating func pushFront(_ at: Int) {
        nodes[at].next = head
        if head >= 0 { nodes[head].prev = at }
        head = at
        if tail < 0 { tail = at }
    }

    mutating func touch(_ at: Int) {
        guard head != at else { return }
        unlink(at)
        pushFront(at)
    }

    mutating func insert(_ key: CacheKey, _ variants: [StoredResponse]) {
        let cost = variants.reduce(0) { $0 + $1.cost }
        let node = Node(key: key, variants: variants, bytes: cost)
        let at: Int
        if let slot = free.popLast() { nodes[slot] = node; at = slot } else { nodes.append(node); at = nodes.count - 1 }
        index[key] = at
        bytes += cost
        entries += variants.count
        pushFront(at)
    }

    mutating func replace(_ at: Int, _ variants: [StoredResponse]) {
        let cost = variants.reduce(0) { $0 + $1.cost }
        bytes += cost - nodes[at].bytes
        entries += variants.count - nodes[at].variants.count
        nodes[at].variants = variants
        nodes[at].bytes = cost
    }

    mutating func remove(_ at: Int) {
        unlink(at)
        index[nodes[at].key] = nil
        bytes -= nodes[at].bytes
        entries -= nodes[at].variants.count
        nodes[at].variants = []
        nodes[at].bytes = 0
        free.append(at)
    }
}
