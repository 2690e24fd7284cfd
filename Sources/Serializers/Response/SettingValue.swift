/// A setting's value as written: YAML gives a scalar, a list or null; `--option key=value`
/// gives a scalar (a list comma-separated, `null` for null).
public enum SettingValue: Sendable, Equatable {
    case null
    case scalar(String)
    case list([String])

    /// `key=value` text: `null` is null, anything else a scalar.
    public init(optionText text: String) {
        self = text == "null" ? .null : .scalar(text)
    }
}
