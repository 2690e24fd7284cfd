/// `xml:` options (DESIGN §5).
public struct XMLOptions: Sendable, Equatable {
    public enum Namespaces: String, Sendable { case keep, strip }
    /// Element paths such as `/rss/channel/item` that always become arrays.
    public var forceArray: [String] = []
    public var namespaces: Namespaces = .keep
    public init(forceArray: [String] = [], namespaces: Namespaces = .keep) {
        self.forceArray = forceArray
        self.namespaces = namespaces
    }
}
