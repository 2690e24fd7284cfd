/// How much JSON one input may become (DESIGN §5, "Bounded work"): linear in the input —
/// 8 bytes per input byte plus 1 MiB — and never past the output cap. Transcoders whose
/// output can outgrow their input (shared references in binary property lists) charge
/// what they write against it as they go.
public enum OutputBound {
    public static let bytesPerInputByte = 8
    public static let constant = 1 << 20
    /// `limits.max_response_body`'s default.
    public static let defaultCap = 32 << 20

    public static func limit(forInput count: Int, cap: Int = defaultCap) -> Int {
        let (scaled, overflow) = count.multipliedReportingOverflow(by: bytesPerInputByte)
        return overflow ? cap : min(cap, scaled &+ constant)
    }
}
