/// The body, decoded by its `charset` parameter (default UTF-8), as one JSON string.
struct TextResponseSerializer: ResponseSerializer {
    static let name = "text"
    static let defaultContentTypes = ["text/*"]

    let validation: ResponseValidation

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        let charset = response.mediaType?.charset
        return validation.serialize(response, as: Self.name) { (body) throws(TranscodeError) in
            var out: [UInt8] = []
            JSONEscaping.appendQuoted(try TextDecoding.utf8(body, charset: charset), to: &out)
            return NormalizedJSON(trusted: out)
        }
    }
}
