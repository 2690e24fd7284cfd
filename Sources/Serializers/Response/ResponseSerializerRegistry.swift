/// Resolves a `response:` block to a serializer by name. Unknown names, and options
/// that belong to another serializer, fail here — at load, never at the first request.
public enum ResponseSerializerRegistry {
    public static let names = ["json", "xml", "plist", "image", "form", "text", "raw", "compound"]

    /// Each serializer's AF default acceptable content types; nil means any.
    public static func defaultContentTypes(_ name: String) -> [MediaRange]? {
        let patterns: [String]?
        switch name {
        case JSONResponseSerializer.name: patterns = JSONResponseSerializer.defaultContentTypes
        case XMLResponseSerializer.name: patterns = XMLResponseSerializer.defaultContentTypes
        case PlistResponseSerializer.name: patterns = PlistResponseSerializer.defaultContentTypes
        case ImageResponseSerializer.name: patterns = ImageResponseSerializer.defaultContentTypes
        case FormResponseSerializer.name: patterns = FormResponseSerializer.defaultContentTypes
        case TextResponseSerializer.name: patterns = TextResponseSerializer.defaultContentTypes
        default: patterns = nil
        }
        return patterns?.compactMap(MediaRange.init)
    }

    /// The Content-Type `transcode` assumes when none is given (DESIGN §7): the first
    /// default type without a wildcard (`text/plain` for text's `text/*`); nil for raw
    /// and compound, which accept anything.
    public static func assumedContentType(_ name: String) -> String? {
        if name == TextResponseSerializer.name { return "text/plain" }
        return defaultContentTypes(name)?.first { !$0.description.contains("*") }?.description
    }

    public static func make(_ settings: ResponseSettings) throws(SettingsError) -> any ResponseSerializer {
        try checkOwnership(settings)
        let validation = ResponseValidation(statusCodes: settings.acceptableStatusCodes, contentTypes: settings.resolvedContentTypes,
                                            maxOutput: settings.maxOutput)
        guard settings.serializer == CompoundResponseSerializer.name else {
            return member(settings.serializer, settings, validation)
        }
        let members = (settings.serializers ?? []).map { name in
            member(name, settings, ResponseValidation(statusCodes: settings.acceptableStatusCodes,
                                                      contentTypes: defaultContentTypes(name), maxOutput: settings.maxOutput))
        }
        return CompoundResponseSerializer(members: members, fallback: RawResponseSerializer(validation: validation))
    }

    static func member(_ name: String, _ s: ResponseSettings, _ v: ResponseValidation) -> any ResponseSerializer {
        switch name {
        case "json": return JSONResponseSerializer(validation: v, options: s.jsonOptions)
        case "xml": return XMLResponseSerializer(validation: v, maxDepth: s.maxJSONDepth, options: s.xml ?? XMLOptions())
        case "plist": return PlistResponseSerializer(validation: v, maxDepth: s.maxJSONDepth)
        case "image": return ImageResponseSerializer(validation: v, options: s.image ?? ImageOptions())
        case "form": return FormResponseSerializer(validation: v, maxDepth: s.maxJSONDepth)
        case "text": return TextResponseSerializer(validation: v)
        default: return RawResponseSerializer(validation: v)
        }
    }

    static func checkOwnership(_ s: ResponseSettings) throws(SettingsError) {
        guard names.contains(s.serializer) else {
            throw SettingsError("unknown serializer '\(s.serializer)' (expected one of \(names.joined(separator: ", ")))")
        }
        var effective = [s.serializer]
        if s.serializer == "compound" {
            guard let members = s.serializers, !members.isEmpty else {
                throw SettingsError("serializers: a compound serializer needs a non-empty list of members")
            }
            for name in members where !names.contains(name) || name == "compound" {
                throw SettingsError("serializers: '\(name)' is not a member serializer (expected one of \(names.filter { $0 != "compound" }.joined(separator: ", ")))")
            }
            effective = members
        } else if s.serializers != nil {
            throw SettingsError("serializers: applies to the compound serializer, not \(s.serializer)")
        }
        func require(_ option: String, _ owner: String) throws(SettingsError) {
            guard effective.contains(owner) else {
                throw SettingsError("\(option): applies to the \(owner) serializer, not \(s.serializer)")
            }
        }
        if s.removeNullValues != nil { try require("remove_null_values", "json") }
        if s.allowFragments != nil { try require("allow_fragments", "json") }
        if s.xml != nil { try require("xml", "xml") }
        if s.image != nil { try require("image", "image") }
    }
}
