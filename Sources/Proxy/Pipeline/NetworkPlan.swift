import EventLoop
import Network

/// What a route's network conditions (and the request's own fault headers) do to one
/// request: how its reply is shaped, the fault in place of its exchange, the chaos done
/// to its answer, and what `Serializerd-Fault-Applied` reports. A class: the writer that
/// carries it is copied along the request path, and most requests have none.
final class NetworkPlan {
    var shaping: ReplyShaping?
    var fault: Fault?
    var chaos: [ChaosOperation] = []
    /// Conditions and faults applied so far, in the header's words.
    var applied: [String] = []

    var appliedText: String? { applied.isEmpty ? nil : applied.joined(separator: ", ") }
}
