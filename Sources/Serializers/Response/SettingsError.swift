/// A serializer setting that cannot be used, with the reason in the user's terms.
/// The config loader adds `file:line:column`; the CLI prints it as is.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
