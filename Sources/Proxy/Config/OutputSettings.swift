import Serializers

/// `output:` — what the client receives.
public struct OutputSettings: Sendable, Equatable {
    public enum OnFailure: String, Sendable { case problem, passthrough }
    public var envelope = false
    public var canonical = false
    /// `numbers:` as written; nil takes the default (`effectiveNumbers`).
    public var numbers: NumberGuard.Mode?
    public var onFailure = OnFailure.problem

    /// What `output.numbers` does: as set, else `reject` for canonical output (which must
    /// never change a value) and `keep` otherwise.
    public var effectiveNumbers: NumberGuard.Mode { numbers ?? (canonical ? .reject : .keep) }
}
