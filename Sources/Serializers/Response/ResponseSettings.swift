/// A route's `response:` block (DESIGN §2), independent of how it was written
/// (YAML, or `--option key=value` on the command line).
public struct ResponseSettings: Sendable, Equatable {
    public var serializer = SerializerName.json
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
    /// json and plist: count unsafe numbers while transcoding (false for `output.numbers:
    /// keep`, which never looks at them).
    public var notesNumbers = true
    /// compound: member serializer names, tried in order.
    public var serializers: [SerializerName]?

    public init(serializer: SerializerName = .json) {
        self.serializer = serializer
    }

    var jsonOptions: JSONReadOptions {
        JSONReadOptions(removeNullValues: removeNullValues ?? false, allowFragments: allowFragments ?? true,
                        maxDepth: maxJSONDepth)
    }
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
        try apply(key: key, value: SettingValue(optionText: value))
    }

    /// Applies one `response:` setting, as the config loader and `--option` both give
    /// it. A list key takes a list or a comma-separated scalar; errors carry the key.
    public mutating func apply(key: String, value: SettingValue) throws(SettingsError) {
        func scalar() throws(SettingsError) -> String {
            switch value {
            case .scalar(let text): return text
            case .null: throw SettingsError(key: key, "expected a value, found null")
            case .list: throw SettingsError(key: key, "expected a single value, found a list")
            }
        }
        func list() throws(SettingsError) -> [String] {
            switch value {
            case .list(let items): return items.map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
            case .scalar(let text): return text.split(separator: ",").map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
            case .null: throw SettingsError(key: key, "expected a list, found null")
            }
        }
        func bool() throws(SettingsError) -> Bool {
            switch try scalar() {
            case "true": return true
            case "false": return false
            case let other: throw SettingsError(key: key, "expected true or false, found '\(other)'")
            }
        }
        switch key {
        case "serializer": serializer = try SerializerName(parsing: scalar(), key: key)
        case "acceptable_status_codes":
            acceptableStatusCodes = value == .null ? nil : try StatusCodeSet(parsing: list())
        case "acceptable_content_types":
            acceptableContentTypes = value == .null ? .any : .only(try Self.mediaRanges(list()))
        case "remove_null_values": removeNullValues = try bool()
        case "allow_fragments": allowFragments = try bool()
        case "max_json_depth":
            let text = try scalar()
            guard let depth = Int(text), (1...10_000).contains(depth) else {
                throw SettingsError(key: key, "expected an integer from 1 to 10000, found '\(text)'")
            }
            maxJSONDepth = depth
        case "serializers":
            var names: [SerializerName] = []
            for item in try list() {
                guard let name = SerializerName(rawValue: item), name != .compound else {
                    throw SettingsError(key: key, "'\(item)' is not a member serializer (expected one of \(SerializerName.members.map(\.rawValue).joined(separator: ", ")))")
                }
                names.append(name)
            }
            serializers = names
        case "xml.force_array", "force_array": xml = XMLOptions(forceArray: try list(), namespaces: xml?.namespaces ?? .keep)
        case "xml.namespaces", "namespaces":
            let text = try scalar()
            guard let mode = XMLOptions.Namespaces(rawValue: text) else {
                throw SettingsError(key: key, "expected keep or strip, found '\(text)'")
            }
            xml = XMLOptions(forceArray: xml?.forceArray ?? [], namespaces: mode)
        case "image.include_data", "include_data": image = ImageOptions(includeData: try bool())
        default: throw SettingsError("unknown response option '\(key)'")
        }
    }

    /// These settings as `transcode --option` values: every one that differs from the
    /// default, so `apply(option:)` over them gives these settings back (the output cap
    /// aside: it is `--max-response-body`).
    public var optionArguments: [String] {
        var options: [String] = []
        if let serializers { options.append("serializers=" + serializers.map(\.rawValue).joined(separator: ",")) }
        if acceptableStatusCodes != .successful {
            options.append("acceptable_status_codes=" + (acceptableStatusCodes?.description ?? "null"))
        }
        switch acceptableContentTypes {
        case .serializerDefault: break
        case .any: options.append("acceptable_content_types=null")
        case .only(let ranges): options.append("acceptable_content_types=" + ranges.map(\.description).joined(separator: ","))
        }
        if let removeNullValues { options.append("remove_null_values=\(removeNullValues)") }
        if let allowFragments { options.append("allow_fragments=\(allowFragments)") }
        if maxJSONDepth != JSONReadOptions.defaultMaxDepth { options.append("max_json_depth=\(maxJSONDepth)") }
        if let xml {
            if !xml.forceArray.isEmpty { options.append("xml.force_array=" + xml.forceArray.joined(separator: ",")) }
            if xml.namespaces != .keep { options.append("xml.namespaces=" + xml.namespaces.rawValue) }
        }
        if let image, image.includeData { options.append("image.include_data=true") }
        return options
    }

    public static func mediaRanges(_ items: [String]) throws(SettingsError) -> [MediaRange] {
        var ranges: [MediaRange] = []
        for item in items {
            guard let range = MediaRange(item) else {
                throw SettingsError(key: "acceptable_content_types", "'\(item)' is not a media type like application/json, application/* or */*")
            }
            ranges.append(range)
        }
        return ranges
    }
}
