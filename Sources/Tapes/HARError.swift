import HTTPCore

/// A HAR file or entry serializerd cannot use, and why.
public struct HARError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
