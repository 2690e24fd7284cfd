extension URIEncodedMethods {
    /// GET/HEAD/DELETE: parameters appended to the client's query, no body.
    static func serialize(_ r: RequestInput, _ parameters: [UInt8]?) throws(RequestSerializationError) -> SerializedRequest {
        let encoded = try encode(parameters, r.budget, as: "the query string")
        return SerializedRequest(query: join(r.query, encoded), contentType: nil, body: [])
    }

    /// `parameters`: a normalized JSON object, or nil for none.
    static func encode(_ parameters: [UInt8]?, _ budget: OutputBudget, as what: String) throws(RequestSerializationError) -> String {
        guard let parameters else { return "" }
        do throws(TranscodeError) {
            return try QueryStringEncoder.encode(JSONTape(normalized: parameters), budget: budget)
        } catch {
            throw RequestSerializationError("request parameters as \(what): \(error.description)")
        }
    }
}

/// Resolves a route's `request: { serializer: NAME }`; an unknown name fails at load.
public enum RequestSerializerRegistry {
    public static let names = ["passthrough", "http", "json", "plist"]

    public static func make(_ name: String) throws(SettingsError) -> any RequestSerializer {
        switch name {
        case "passthrough": return PassthroughRequestSerializer()
        case "http": return HTTPRequestSerializer()
        case "json": return BodyRequestSerializer.json
        case "plist": return BodyRequestSerializer.plist
        default:
            throw SettingsError("unknown request serializer '\(name)' (expected one of \(names.joined(separator: ", ")))")
        }
    }
}
