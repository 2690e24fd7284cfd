/// What is wrong with a fault or chaos directive, in words.
public struct NetworkSyntaxError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
