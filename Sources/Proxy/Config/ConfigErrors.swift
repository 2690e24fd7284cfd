/// Every problem of one config file, in file order; printed one per line.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public let errors: [ConfigError]
    public init(_ errors: [ConfigError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
