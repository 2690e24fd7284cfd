import Cache
import HTTPCore
import Foundation
import Synchronization

/// `--cache`: what a cache lookup costs the hit path, and what the locks cost when both
/// cores look up at once: 16 shards (the daemon's) against one lock, 1 KB entries under
/// 10,000 URLs, each thread its own pseudo-random order. (This machine's two CPUs may be
/// one core's two hardware threads: two threads each run slower for that alone.) Median of 7 rounds of at least
/// 0.3 s, nanoseconds a lookup.
enum CacheBench {
    static let keys = (0..<10_000).map { CacheKey(method: "GET", url: "http://127.0.0.1:28081/v1/items/\($0)?page=1") }

    static func filled(shards: Int) -> ResponseCache {
        let cache = ResponseCache(maxBytes: 256 << 20, shards: shards)
        let fields: HeaderFields = [("Cache-Control", "max-age=600"), ("Date", "Fri, 27 Nov 2026 20:00:00 GMT")]
        let freshness = Freshness(status: 200, fields: fields, requestedAt: 0, receivedAt: 0, wallNow: 0)
        for key in keys {
            cache.store(key, StoredResponse(status: 200, fields: fields, body: [UInt8](repeating: 0x61, count: 1024), serializer: "json",
                                            freshness: freshness, vary: [], request: { _ in nil }, route: "bench"))
        }
        return cache
    }

    /// Nanoseconds a lookup with `threads` looking up at once.
    static func round(_ cache: ResponseCache, threads: Int) -> Double {
        let results = Mutex([Double](repeating: 0, count: threads))
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            // Keys of its own, as each request makes its own: no reference count shared.
            let mine = keys.map { CacheKey(method: "GET", url: String(decoding: Array($0.url.utf8), as: UTF8.self)) }
            var state = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            var n = 0, found = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var elapsed = 0.0
            repeat {
                for _ in 0..<10_000 {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    if cache.lookup(mine[Int(state >> 33) % mine.count], request: { _ in nil }) != nil { found += 1 }
                }
                n += 10_000
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
            } while elapsed < 3e8
            precondition(found == n, "every key is stored")
            results.withLock { $0[thread] = elapsed / Double(n) }
        }
        return results.withLock { $0.reduce(0, +) } / Double(threads)
    }

    static func run() {
        for shards in [16, 1] {
            let cache = filled(shards: shards)
            for threads in [1, 2] {
                var rounds = (0..<7).map { _ in round(cache, threads: threads) }
                rounds.sort()
                print(String(format: "cache lookup, %2d shard(s), %d thread(s): %.0f ns (%.0f–%.0f)", shards, threads,
                             rounds[3], rounds[0], rounds[6]))
            }
        }
    }
}
