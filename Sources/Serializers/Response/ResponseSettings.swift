/// A route's `response:` block (DESIGN §2), independent of how it was written
/// (YAML, or `--option key=value` on the command line).
public struct ResponseSettings: Sendable, Equatable {
    public var serializer: String = "json"
    /// nil disables the check; the default is AF's 200–299.
    public var acceptableStatusCodes: StatusCodeSet? = .successful
    public var acceptableContentTypes: ContentTypePolicy = .serializerDefault
    /// json: AF `removesKeysWithNullValues`.
    public var removeNullValues: Bool?
    /// json: accept top-level scalars.
    public var allowFragments: Bool?
    /// `limits.max_json_depth`.
    public var maxJSONDepth: Int = JSONReadOptions.defaultMaxDepth
    /// `limits.max_response_body`: the output cap.
    public var maxOutput: Int = OutputBudget.defaultCap
    public var xml: XMLOptions?
    public var image: ImageOptions?
    /// compound: member serializer names, tried in order.
    public var serializers: [String]?

    public init(serializer: String = "json") {
        self.serializer = serializer
    }

    var jsonOptions: JSONReadOptions {
        JSONReadOptions(removeNullValues: removeNullValues ?? false, allowFragments: allowFragments ?? true,
                        maxDepth: maxJSONDepth)
    }
}

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

/// `image:` options.
public struct ImageOptions: Sendable, Equatable {
    /// Adds the whole body as `"base64"`.
    public var includeData = false
    public init(includeData: Bool = false) { self.includeData = includeData }
}

extension ResponseSettings {
    /// Applies one `key=value` as the `transcode` command's `--option` gives it; keys
    /// are the `response:` keys, nested ones as `xml.force_array` or bare `force_array`.
    public mutating func apply(option: String) throws(SettingsError) {
        guard let eq = option.firstIndex(of: "=") else {
            throw SettingsError("option '\(option)' is not key=value")
        }
        let key = String(option[..<eq]).trimmingASCIIWhitespace()
        let value = String(option[option.index(after: eq)...]).trimmingASCIIWhitespace()
        let list = value.split(separator: ",").map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        switch key {
        case "serializer": serializer = value
        case "acceptable_status_codes":
            acceptableStatusCodes = value == "null" ? nil : try StatusCodeSet(parsing: list)
        case "acceptable_content_types":
            acceptableContentTypes = value == "null" ? .any : .only(try Self.mediaRanges(list))
        case "remove_null_values": removeNullValues = try Self.bool(key, value)
        case "allow_fragments": allowFragments = try Self.bool(key, value)
        case "max_json_depth":
            guard let depth = Int(value), (1...10_000).contains(depth) else {
                throw SettingsError("max_json_depth: expected an integer from 1 to 10000, found '\(value)'")
            }
            maxJSONDepth = depth
        case "serializers": serializers = list
        case "xml.force_array", "force_array": xml = XMLOptions(forceArray: list, namespaces: xml?.namespaces ?? .keep)
        case "xml.namespaces", "namespaces":
            guard let mode = XMLOptions.Namespaces(rawValue: value) else {
                throw SettingsError("namespaces: expected keep or strip, found '\(value)'")
            }
            xml = XMLOptions(forceArray: xml?.forceArray ?? [], namespaces: mode)
        case "image.include_data", "include_data": image = ImageOptions(includeData: try Self.bool(key, value))
        default: throw SettingsError("unknown response option '\(key)'")
        }
    }

    public static func mediaRanges(_ items: [String]) throws(SettingsError) -> [MediaRange] {
        var ranges: [MediaRange] = []
        for item in items {
            guard let range = MediaRange(item) else {
                throw SettingsError("acceptable_content_types: '\(item)' is not a media type like application/json, application/* or */*")
            }
            ranges.append(range)
        }
        return ranges
    }

    static func bool(_ key: String, _ value: String) throws(SettingsError) -> Bool {
        switch value {
        case "true": return true
        case "false": return false
        default: throw SettingsError("\(key): expected true or false, found '\(value)'")
        }
    }
}
