/// AFHTTPResponseSerializer's data, made JSON: UTF-8 text as a string, other bytes
/// as `{"bytes":N,"base64":"…"}`. Accepts any content type by default.
struct RawResponseSerializer: ResponseSerializer {
    static let name = "raw"

    let validation: ResponseValidation

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body) throws(TranscodeError) in
            Self.transcode(body)
        }
    }

    static func transcode(_ body: [UInt8]) -> NormalizedJSON {
        var out: [UInt8] = []
        if UTF8Validation.isValid(body) {
            JSONEscaping.appendQuoted(body, to: &out)
        } else {
            out.append(contentsOf: "{\"bytes\":\(body.count),\"base64\":\"".utf8)
            out.append(contentsOf: Base64.encode(body))
            out.append(contentsOf: "\"}".utf8)
        }
        return NormalizedJSON(trusted: out)
    }
}
