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
