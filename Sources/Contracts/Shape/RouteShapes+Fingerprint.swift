import CSchema
import Serializers

/// Drift learning's shortcut (DESIGN §10): an answer whose shape fingerprint its endpoint
/// and status already learned is not walked; only its strings at nodes still narrowing a
/// format are read.
extension RouteShapes {
    /// A learned answer's fingerprint, and by the fingerprint's string slot, the node of
    /// each string whose formats were still being narrowed (-1: none).
    struct Known {
        let print: UInt64
        let tracked: [Int32]
    }

    static let maxKnown = 8
    /// Strings a fingerprint lists on the stack (1 KiB, which Swift keeps off the heap);
    /// an answer with more gets a list on the heap, up to `maxPrintStrings`; beyond, it
    /// is walked in full.
    static let stackPrintStrings = 64
    static let maxPrintStrings = 65_536

    /// An answer fingerprinted (its strings listed on the stack while they fit), then learned.
    func observe(key: UnsafeBufferPointer<UInt8>, _ status: Int, _ body: UnsafeBufferPointer<UInt8>?, _ refusal: String?,
                 _ after: Int, _ now: () -> Double) -> [ShapeDrift] {
        guard let body, fingerprints else { return observe(key, status, body, refusal, after, now, print: 0, strings: .init(start: nil, count: 0)) }
        // The fingerprint is read outside the lock.
        return withUnsafeTemporaryAllocation(of: sp_string.self, capacity: Self.stackPrintStrings) { strings in
            var count = 0
            let print = serializerd_shape_print(body.baseAddress, body.count, strings.baseAddress, strings.count, &count)
            if count <= strings.count {
                return observe(key, status, body, refusal, after, now, print: print, strings: UnsafeBufferPointer(rebasing: strings[..<count]))
            }
            // More strings than the stack list holds: a string takes at least 2 bytes.
            let capacity = min(body.count / 2 + 1, Self.maxPrintStrings)
            let heap = UnsafeMutableBufferPointer<sp_string>.allocate(capacity: capacity)
            defer { heap.deallocate() }
            let again = serializerd_shape_print(body.baseAddress, body.count, heap.baseAddress, heap.count, &count)
            return observe(key, status, body, refusal, after, now, print: count <= heap.count ? again : 0,
                           strings: UnsafeBufferPointer(rebasing: heap[..<min(count, heap.count)]))
        }
    }

    /// An answer of a learned shape: its strings at nodes still narrowing their formats.
    static func narrowFormats(_ nodes: ShapeNodes, _ known: Known, _ body: UnsafeBufferPointer<UInt8>,
                                      _ strings: UnsafeBufferPointer<sp_string>) {
        guard !known.tracked.isEmpty else { return }
        let p = nodes.base
        for s in strings where Int(s.slot) < known.tracked.count {
            let node = Int(known.tracked[Int(s.slot)])
            guard node >= 0, p[node].formats != 0 else { continue }
            p[node].formats = s.escaped != 0 ? 0
                : ShapeFormats.matched(UnsafeBufferPointer(rebasing: body[Int(s.start)..<Int(s.start + s.length)]), among: p[node].formats)
        }
    }

    static func remember(_ shape: StatusShape, _ print: UInt64, _ stringNodes: [Int32], _ strings: UnsafeBufferPointer<sp_string>) {
        let p = shape.tree.nodes.base
        var tracked: [Int32] = []
        for (s, node) in zip(strings, stringNodes) where p[Int(node)].formats != 0 {
            let slot = Int(s.slot)
            if tracked.count <= slot { tracked += repeatElement(-1, count: slot + 1 - tracked.count) }
            tracked[slot] = node
        }
        let known = Known(print: print, tracked: tracked)
        if shape.known.count < maxKnown {
            shape.known.append(known)
        } else {
            shape.known[shape.nextKnown] = known
            shape.nextKnown = (shape.nextKnown + 1) % maxKnown
        }
    }
}
