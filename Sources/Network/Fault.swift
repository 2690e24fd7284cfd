/// One injected failure, in place of the upstream exchange (DESIGN §3).
public enum Fault: Sendable, Equatable {
    /// The client connection is reset (RST) without a reply.
    case reset
    /// `upstream-timeout` after the route's timeout.
    case timeout
    /// The reply's head and half its body, then the connection closes.
    case truncate
    /// A problem of type `injected-fault` with this status.
    case status(Int)

    /// The `fault` label of `serializerd_faults_total`.
    public var label: String {
        switch self {
        case .reset: "reset"
        case .timeout: "timeout"
        case .truncate: "truncate"
        case .status: "status"
        }
    }

    /// How `Serializerd-Fault-Applied` names it.
    public var applied: String {
        if case .status(let code) = self { return "status=\(code)" }
        return label
    }

    /// Statuses a fault may answer with: a client must be able to tell it from a success.
    public static let statuses = 400...599
}
