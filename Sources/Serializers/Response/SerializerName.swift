/// The response serializers a route can name (DESIGN §5).
public enum SerializerName: String, CaseIterable, Sendable, CustomStringConvertible {
    case json, xml, plist, image, form, text, raw, compound

    /// Those a compound serializer can try.
    public static let members = allCases.filter { $0 != .compound }

    public init(parsing text: String, key: String = "serializer") throws(SettingsError) {
        guard let name = SerializerName(rawValue: text) else {
            throw SettingsError(key: key, "unknown serializer '\(text)' (expected one of \(Self.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self = name
    }

    public var description: String { rawValue }
}
