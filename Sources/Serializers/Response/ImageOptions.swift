/// `image:` options.
public struct ImageOptions: Sendable, Equatable {
    /// Adds the whole body as `"base64"`.
    public var includeData = false
    public init(includeData: Bool = false) { self.includeData = includeData }
}
