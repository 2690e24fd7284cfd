/// AFHTTPResponseSerializer's data, made JSON: UTF-8 text as a string, other bytes
/// as `{"bytes":N,"base64":"…"}`. Accepts any content type by default.
struct RawResponseSerializer: ResponseSerializer {
    static let name = SerializerName.raw.rawValue

    let validation: ResponseValidation

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try Self.transcode(body, budget: budget)
        }
    }

    static func transcode(_ body: [UInt8], budget: OutputBudget) throws(TranscodeError) -> NormalizedJSON {
        var out: [UInt8] = []
        if UTF8Validation.isValid(body) {
            try budget.charge(body.withUnsafeBufferPointer(JSONEscaping.quotedLength), "the text as a JSON string")
            JSONEscaping.appendQuoted(body, to: &out)
        } else {
            try budget.charge(Base64.encodedLength(body.count) + 40, "the body in base64")
            out.append(contentsOf: "{\"bytes\":\(body.count),\"base64\":\"".utf8)
            out.append(contentsOf: Base64.encode(body))
            out.append(contentsOf: "\"}".utf8)
        }
        return NormalizedJSON(trusted: out)
    }
}
