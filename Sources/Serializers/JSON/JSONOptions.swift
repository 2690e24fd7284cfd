/// How JSON input is read: AF's reading options plus serializerd's limits.
public struct JSONReadOptions: Sendable, Equatable {
    /// AF `removesKeysWithNullValues`: drop null members and null array elements.
    public var removeNullValues: Bool
    /// Accept a top-level scalar (NSJSONReadingFragmentsAllowed).
    public var allowFragments: Bool
    /// Deepest nesting accepted; deeper input fails instead of exhausting the stack.
    public var maxDepth: Int

    public static let defaultMaxDepth = 512

    public init(removeNullValues: Bool = false, allowFragments: Bool = true,
                maxDepth: Int = JSONReadOptions.defaultMaxDepth) {
        self.removeNullValues = removeNullValues
        self.allowFragments = allowFragments
        self.maxDepth = maxDepth
    }
}
