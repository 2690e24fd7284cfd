/// The body, decoded by its `charset` parameter (default UTF-8), as one JSON string.
struct TextResponseSerializer: ResponseSerializer {
    static let name = SerializerName.text.rawValue
    static let defaultContentTypes = ["text/*"]

    let validation: ResponseValidation

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        let charset = response.mediaType?.charset
        return validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            let text = try TextDecoding.utf8(body, charset: charset)
            try budget.charge(text.count, "the decoded text")
            try budget.charge(text.withUnsafeBufferPointer(JSONEscaping.quotedLength), "the text as a JSON string")
            var out: [UInt8] = []
            JSONEscaping.appendQuoted(text, to: &out)
            return NormalizedJSON(trusted: out)
        }
    }
}
