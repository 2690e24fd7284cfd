/// `application/x-www-form-urlencoded` bodies as JSON objects (see `FormDecoder`).
struct FormResponseSerializer: ResponseSerializer {
    static let name = "form"
    static let defaultContentTypes = ["application/x-www-form-urlencoded"]

    let validation: ResponseValidation
    var maxDepth = JSONReadOptions.defaultMaxDepth

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        let charset = response.mediaType?.charset
        return validation.serialize(response, as: Self.name) { (body) throws(TranscodeError) in
            NormalizedJSON(try FormDecoder.decode(body, charset: charset, maxDepth: maxDepth))
        }
    }
}
