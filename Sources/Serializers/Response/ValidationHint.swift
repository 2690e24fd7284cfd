extension ResponseSettings {
    /// For a status or content-type refusal: what these settings accept and the key that
    /// decides it, so a user knows what to change (`nil` for other failures).
    public func hint(for error: SerializationError) -> String? {
        var parts: [String] = []
        var next: SerializationError? = error
        while let current = next {
            switch current {
            case .unacceptableStatus:
                if let codes = acceptableStatusCodes { parts.append("accepted statuses: \(codes) (acceptable_status_codes)") }
            case .unacceptableContentType:
                if let ranges = resolvedContentTypes {
                    parts.append("accepted content types: \(ranges.map(\.description).joined(separator: ", ")) (acceptable_content_types)")
                }
            case .serializationFailed, .contractViolation:
                break
            }
            next = current.underlying
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The content types the check uses; nil when it is off.
    var resolvedContentTypes: [MediaRange]? {
        switch acceptableContentTypes {
        case .serializerDefault: return ResponseSerializerRegistry.defaultContentTypes(serializer)
        case .any: return nil
        case .only(let list): return list
        }
    }
}
