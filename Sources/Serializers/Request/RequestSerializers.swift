/// `passthrough` (default): body and Content-Type forwarded as sent.
struct PassthroughRequestSerializer: RequestSerializer {
    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        if r.method.uppercased() == "HEAD" { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: r.contentType, body: r.body)
    }
}

/// AFHTTPRequestSerializer: URI methods get the query, others a form body. Like AF,
/// a non-URI method without parameters still sends an empty form body.
///
/// Every request serializer reads the parameters as normalized JSON and walks it on a
/// `JSONTape`: no tree of the body is ever built.
struct HTTPRequestSerializer: RequestSerializer {
    static let formType = "application/x-www-form-urlencoded"

    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.json(r)
        if URIEncodedMethods.contains(r.method) { return try URIEncodedMethods.serialize(r, parameters) }
        let encoded = try URIEncodedMethods.encode(parameters, r.budget, as: "a form body")
        return SerializedRequest(query: r.query, contentType: Self.formType, body: Array(encoded.utf8))
    }
}

/// AFJSONRequestSerializer and AFPropertyListRequestSerializer: URI methods as `http`;
/// others the parameters as a body of `contentType`; no parameters, no body.
struct BodyRequestSerializer: RequestSerializer {
    enum Format: Sendable { case json, plist }
    let contentType: String
    let format: Format

    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.json(r)
        if URIEncodedMethods.contains(r.method) { return try URIEncodedMethods.serialize(r, parameters) }
        guard let parameters else { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        switch format {
        case .json:
            return SerializedRequest(query: r.query, contentType: contentType, body: parameters)
        case .plist:
            let body = try PlistXMLWriter.write(JSONTape(normalized: parameters), budget: r.budget)
            return SerializedRequest(query: r.query, contentType: contentType, body: body)
        }
    }

    static let json = BodyRequestSerializer(contentType: "application/json", format: .json)
    static let plist = BodyRequestSerializer(contentType: "application/x-plist", format: .plist)
}

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
