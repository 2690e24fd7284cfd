/// How much output one serialization may write (DESIGN §5, "Bounded work"): linear in
/// its input — 8 bytes per input byte plus 1 MiB — and never past the cap
/// (`limits.max_response_body` for a response, 4 × `limits.max_request_body` for what a
/// request serializer sends upstream). Every writer charges its running total as it
/// writes, so a body whose output would outgrow the bound fails before the memory is spent.
public struct OutputBudget: Sendable, Equatable {
    public static let bytesPerInputByte = 8
    public static let constant = 1 << 20
    /// `limits.max_response_body`'s default.
    public static let defaultCap = 32 << 20

    /// Writers may reserve a limit up to this whole (address space, not memory).
    public static let reserveUpTo = 256 << 20

    /// The most bytes this serialization may write.
    public let limit: Int
    let inputCount: Int
    let cap: Int
    /// The setting that sets the cap, named when it is what was exceeded.
    let capSetting: String

    public init(input count: Int, cap: Int = defaultCap, capSetting: String = "limits.max_response_body") {
        let (scaled, overflow) = count.multipliedReportingOverflow(by: Self.bytesPerInputByte)
        limit = overflow ? cap : min(cap, scaled &+ Self.constant)
        inputCount = count
        self.cap = cap
        self.capSetting = capSetting
    }

    /// Charges a writer's running total.
    @inline(__always)
    public func charge(_ total: Int, _ what: StaticString = "the output") throws(TranscodeError) {
        if total > limit { throw exceeded(what) }
    }

    /// Whether `total` bytes fit, for writers that cannot throw where they write.
    @inline(__always)
    public func admits(_ total: Int) -> Bool { total <= limit }

    public func exceeded(_ what: StaticString = "the output") -> TranscodeError {
        let reason = limit == cap
            ? "the output cap (\(capSetting))"
            : "the bound for a \(inputCount)-byte body (8 bytes per input byte plus 1 MiB)"
        return TranscodeError("\(what) would exceed \(limit) bytes, \(reason)")
    }
}
