/// The client's body cannot be read as parameters (→ 400 bad-request).
public struct RequestSerializationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
