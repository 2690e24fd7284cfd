/// `application/x-www-form-urlencoded` bodies as JSON objects (see `FormDecoder`).
struct FormResponseSerializer: ResponseSerializer {
    static let name = SerializerName.form.rawValue
    static let defaultContentTypes = ["application/x-www-form-urlencoded"]

    let validation: ResponseValidation
    var maxDepth = JSONReadOptions.defaultMaxDepth

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        let charset = response.mediaType?.charset
        return validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try FormDecoder.transcode(body, charset: charset, maxDepth: maxDepth, budget: budget)
        }
    }
}
