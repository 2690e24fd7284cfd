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
