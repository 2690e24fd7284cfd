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
        let encoded = parameters.map(QueryStringEncoder.encode) ?? ""
        if URIEncodedMethods.contains(r.method) {
            return SerializedRequest(query: URIEncodedMethods.join(r.query, encoded), contentType: nil, body: [])
        }
        return SerializedRequest(query: r.query, contentType: Self.formType, body: Array(encoded.utf8))
    }
}

/// AFJSONRequestSerializer: URI methods as `http`; others a JSON body; no parameters, no body.
struct JSONRequestSerializer: RequestSerializer {
    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.decode(r)
        if URIEncodedMethods.contains(r.method) {
            let encoded = parameters.map(QueryStringEncoder.encode) ?? ""
            return SerializedRequest(query: URIEncodedMethods.join(r.query, encoded), contentType: nil, body: [])
        }
        guard let parameters else { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: "application/json",
                                 body: NormalizedJSON(.object(parameters)).bytes)
    }
}

/// AFPropertyListRequestSerializer: URI methods as `http`; others an XML plist body.
struct PlistRequestSerializer: RequestSerializer {
    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        let parameters = try RequestParameters.decode(r)
        if URIEncodedMethods.contains(r.method) {
            let encoded = parameters.map(QueryStringEncoder.encode) ?? ""
            return SerializedRequest(query: URIEncodedMethods.join(r.query, encoded), contentType: nil, body: [])
        }
        guard let parameters else { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: "application/x-plist",
                                 body: try PlistXMLWriter.write(.object(parameters)))
    }
}

/// Resolves a route's `request: { serializer: NAME }`; an unknown name fails at load.
public enum RequestSerializerRegistry {
    public static let names = ["passthrough", "http", "json", "plist"]

    public static func make(_ name: String) throws(SettingsError) -> any RequestSerializer {
        switch name {
        case "passthrough": return PassthroughRequestSerializer()
        case "http": return HTTPRequestSerializer()
        case "json": return JSONRequestSerializer()
        case "plist": return PlistRequestSerializer()
        default:
            throw SettingsError("unknown request serializer '\(name)' (expected one of \(names.joined(separator: ", ")))")
        }
    }
}
