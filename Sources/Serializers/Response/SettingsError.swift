/// A serializer setting that cannot be used, with the reason in the user's terms.
/// The config loader places it at the key's own `file:line:column` (the error path names
/// the key, so it prints `reason`); the CLI prints `message`, key first.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting at fault (`serializers`, `xml.force_array`); nil when none is.
    public let key: String?
    public let reason: String

    public init(_ reason: String) {
        key = nil
        self.reason = reason
    }

    public init(key: String, _ reason: String) {
        self.key = key
        self.reason = reason
    }

    public var message: String { key.map { "\($0): \(reason)" } ?? reason }
    public var description: String { message }
}
