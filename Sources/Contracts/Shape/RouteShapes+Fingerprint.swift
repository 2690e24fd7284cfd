import CSchema
import Serializers

/// Drift learning's shortcut (DESIGN §10): an answer whose shape fingerprint its endpoint
/// and status already learned is not walked; only its strings at nodes still narrowing a
/// format are read.
extension RouteShapes {
    static let maxKnown = 8
    /// Strings a fingerprint lists on the stack (1 KiB, which Swift keeps off the heap);
    /// an answer with more gets a list on the heap, up to `maxPrintStrings`; beyond, it
    /// is walked in full.
    static let stackPrintStrings = 64
    static let maxPrintStrings = 65_536

    /// An answer fingerprinted, then learned. Its strings are listed only once some learned
    /// shape of the route has strings whose formats still narrow; until then an answer of a
    /// learned shape needs none, and one that is walked lists them there.
    func observe(key: UnsafeBufferPointer<UInt8>, _ status: Int, _ body: UnsafeBufferPointer<UInt8>?, _ refusal: String?,
                 _ after: Int, _ now: () -> Double) -> [ShapeDrift] {
        guard let body, fingerprints else {
            return observe(key, status, body, refusal, after, now, print: 0, strings: .init(start: nil, count: 0), listed: true)
        }
        // The fingerprint is read outside the lock.
        guard tracking.load(ordering: .relaxed) else {
            var count = 0
            let print = serializerd_shape_print(body.baseAddress, body.count, nil, 0, &count)
            return observe(key, status, body, refusal, after, now, print: print, strings: .init(start: nil, count: 0), listed: false)
        }
        return Self.fingerprint(body) { print, strings in
            observe(key, status, body, refusal, after, now, print: print, strings: strings, listed: true)
        }
    }

    /// The answer's fingerprint and its strings, listed on the stack while they fit.
    static func fingerprint<R>(_ body: UnsafeBufferPointer<UInt8>, _ use: (UInt64, UnsafeBufferPointer<sp_string>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: sp_string.self, capacity: Self.stackPrintStrings) { strings in
            var count = 0
            let print = serializerd_shape_print(body.baseAddress, body.count, strings.baseAddress, strings.count, &count)
            if count <= strings.count {
                return use(print, UnsafeBufferPointer(rebasing: strings[..<count]))
            }
            // More strings than the stack list holds: a string takes at least 2 bytes.
            let capacity = min(body.count / 2 + 1, Self.maxPrintStrings)
            let heap = UnsafeMutableBufferPointer<sp_string>.allocate(capacity: capacity)
            defer { heap.deallocate() }
            let again = serializerd_shape_print(body.baseAddress, body.count, heap.baseAddress, heap.count, &count)
            return use(count <= heap.count ? again : 0, UnsafeBufferPointer(rebasing: heap[..<min(count, heap.count)]))
        }
    }

    /// An answer of a learned shape: its strings at nodes still narrowing their formats.
    static func narrowFormats(_ nodes: ShapeNodes, _ tracked: [Int32], _ body: UnsafeBufferPointer<UInt8>,
                              _ strings: UnsafeBufferPointer<sp_string>) {
        guard !tracked.isEmpty else { return }
        let p = nodes.base
        for s in strings where Int(s.slot) < tracked.count {
            let node = Int(tracked[Int(s.slot)])
            guard node >= 0, p[node].formats != 0 else { continue }
            p[node].formats = s.escaped != 0 ? 0
                : ShapeFormats.matched(UnsafeBufferPointer(rebasing: body[Int(s.start)..<Int(s.start + s.length)]), among: p[node].formats)
        }
    }

    /// Keeps the answer's fingerprint; true when some of its strings still narrow formats.
    @discardableResult
    static func remember(_ shape: StatusShape, _ print: UInt64, _ stringNodes: [Int32], _ strings: UnsafeBufferPointer<sp_string>) -> Bool {
        let p = shape.tree.nodes.base
        var tracked: [Int32] = []
        for (s, node) in zip(strings, stringNodes) where p[Int(node)].formats != 0 {
            let slot = Int(s.slot)
            if tracked.count <= slot { tracked += repeatElement(-1, count: slot + 1 - tracked.count) }
            tracked[slot] = node
        }
        if shape.prints.count < maxKnown {
            shape.prints.append(print)
            shape.tracked.append(tracked)
        } else {
            shape.prints[shape.nextKnown] = print
            shape.tracked[shape.nextKnown] = tracked
            shape.nextKnown = (shape.nextKnown + 1) % maxKnown
        }
        return !tracked.isEmpty
    }
}
