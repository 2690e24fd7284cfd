/// Resolves a `response:` block to a serializer. Options that belong to another
/// serializer fail here — at load, never at the first request.
public enum ResponseSerializerRegistry {
    /// Each serializer's AF default acceptable content types; nil means any.
    public static func defaultContentTypes(_ name: SerializerName) -> [MediaRange]? {
        let patterns: [String]? = switch name {
        case .json: JSONResponseSerializer.defaultContentTypes
        case .xml: XMLResponseSerializer.defaultContentTypes
        case .plist: PlistResponseSerializer.defaultContentTypes
        case .image: ImageResponseSerializer.defaultContentTypes
        case .form: FormResponseSerializer.defaultContentTypes
        case .text: TextResponseSerializer.defaultContentTypes
        case .raw, .compound: nil
        }
        return patterns?.compactMap(MediaRange.init)
    }

    /// The Content-Type `transcode` assumes when none is given (DESIGN §7): the first
    /// default type without a wildcard (`text/plain` for text's `text/*`); nil for raw
    /// and compound, which accept anything.
    public static func assumedContentType(_ name: SerializerName) -> String? {
        if name == .text { return "text/plain" }
        return defaultContentTypes(name)?.first { !$0.description.contains("*") }?.description
    }

    public static func make(_ settings: ResponseSettings) throws(SettingsError) -> any ResponseSerializer {
        try checkOwnership(settings)
        let validation = ResponseValidation(statusCodes: settings.acceptableStatusCodes, contentTypes: settings.resolvedContentTypes,
                                            maxOutput: settings.maxOutput)
        guard settings.serializer == .compound else {
            return member(settings.serializer, settings, validation)
        }
        let members = (settings.serializers ?? []).map { name in
            member(name, settings, ResponseValidation(statusCodes: settings.acceptableStatusCodes,
                                                      contentTypes: defaultContentTypes(name), maxOutput: settings.maxOutput))
        }
        return CompoundResponseSerializer(members: members, fallback: RawResponseSerializer(validation: validation))
    }

    /// The serializer for one streamed event's data (DESIGN §9): the same transcoding,
    /// no status or content-type check; a compound's members are tried in order.
    public static func makeForEvents(_ settings: ResponseSettings) throws(SettingsError) -> any ResponseSerializer {
        try checkOwnership(settings)
        let validation = ResponseValidation(statusCodes: nil, contentTypes: nil, maxOutput: settings.maxOutput)
        guard settings.serializer == .compound else { return member(settings.serializer, settings, validation) }
        let members = (settings.serializers ?? []).map { member($0, settings, validation) }
        return CompoundResponseSerializer(members: members, fallback: RawResponseSerializer(validation: validation))
    }

    /// The json serializer with the route's JSON options and no checks: for WebSocket
    /// messages (`websocket.normalize: json`), whatever the route's own serializer is.
    public static func makeForMessages(_ settings: ResponseSettings) -> any ResponseSerializer {
        JSONResponseSerializer(validation: ResponseValidation(statusCodes: nil, contentTypes: nil, maxOutput: settings.maxOutput),
                               options: settings.jsonOptions, notesNumbers: settings.notesNumbers)
    }

    static func member(_ name: SerializerName, _ s: ResponseSettings, _ v: ResponseValidation) -> any ResponseSerializer {
        switch name {
        case .json: JSONResponseSerializer(validation: v, options: s.jsonOptions, notesNumbers: s.notesNumbers)
        case .xml: XMLResponseSerializer(validation: v, maxDepth: s.maxJSONDepth, options: s.xml ?? XMLOptions())
        case .plist: PlistResponseSerializer(validation: v, maxDepth: s.maxJSONDepth, notesNumbers: s.notesNumbers)
        case .image: ImageResponseSerializer(validation: v, options: s.image ?? ImageOptions())
        case .form: FormResponseSerializer(validation: v, maxDepth: s.maxJSONDepth)
        case .text: TextResponseSerializer(validation: v)
        // A compound is never a member (`apply` refuses it).
        case .raw, .compound: RawResponseSerializer(validation: v)
        }
    }

    /// Options that belong to another serializer fail at load, naming the option.
    static func checkOwnership(_ s: ResponseSettings) throws(SettingsError) {
        var effective = [s.serializer]
        if s.serializer == .compound {
            guard let members = s.serializers, !members.isEmpty else {
                throw SettingsError(key: "serializers", "a compound serializer needs a non-empty list of members")
            }
            effective = members
        } else if s.serializers != nil {
            throw SettingsError(key: "serializers", "applies to the compound serializer, not \(s.serializer)")
        }
        func require(_ option: String, _ owner: SerializerName) throws(SettingsError) {
            guard effective.contains(owner) else {
                throw SettingsError(key: option, "applies to the \(owner) serializer, not \(s.serializer)")
            }
        }
        if s.removeNullValues != nil { try require("remove_null_values", .json) }
        if s.allowFragments != nil { try require("allow_fragments", .json) }
        if s.xml != nil { try require("xml", .xml) }
        if s.image != nil { try require("image", .image) }
    }
}
