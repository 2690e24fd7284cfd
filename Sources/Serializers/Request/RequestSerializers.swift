/// `passthrough` (default): body and Content-Type forwarded as sent.
struct PassthroughRequestSerializer: RequestSerializer {
    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        if r.method.uppercased() == "HEAD" { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: r.contentType, body: r.body)
    }
}

/// AFHTTPRequestSerializer: URI methods get the query, others a form body. Like AF,
/// a non-URI method without parameters still sends an empty form body.
struct HTTPRequestSerializer: RequestSerializer {
    static let formType = "application/x-www-form-urlencoded"

    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.decode(r)
        if URIEncodedMethods.contains(r.method) { return URIEncodedMethods.serialize(r, parameters) }
        let encoded = parameters.map(QueryStringEncoder.encode) ?? ""
        return SerializedRequest(query: r.query, contentType: Self.formType, body: Array(encoded.utf8))
    }
}

/// AFJSONRequestSerializer and AFPropertyListRequestSerializer: URI methods as `http`;
/// others the parameters as a body of `contentType`; no parameters, no body.
struct BodyRequestSerializer: RequestSerializer {
    let contentType: String
    let encode: @Sendable (JSONValue) throws(RequestSerializationError) -> [UInt8]

    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.decode(r)
        if URIEncodedMethods.contains(r.method) { return URIEncodedMethods.serialize(r, parameters) }
        guard let parameters else { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: contentType, body: try encode(.object(parameters)))
    }

    static let json = BodyRequestSerializer(contentType: "application/json") { NormalizedJSON($0).bytes }
    static let plist = BodyRequestSerializer(contentType: "application/x-plist") { (value) throws(RequestSerializationError) in
        try PlistXMLWriter.write(value)
    }
}

extension URIEncodedMethods {
    /// GET/HEAD/DELETE: parameters appended to the client's query, no body.
    static func serialize(_ r: RequestInput, _ parameters: [(String, JSONValue)]?) -> SerializedRequest {
        let encoded = parameters.map(QueryStringEncoder.encode) ?? ""
        return SerializedRequest(query: join(r.query, encoded), contentType: nil, body: [])
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
