/// `output:` — what the client receives.
public struct OutputSettings: Sendable, Equatable {
    public enum OnFailure: String, Sendable { case problem, passthrough }
    public var envelope = false
    public var canonical = false
    public var onFailure = OnFailure.problem
}
