/// AFImageResponseSerializer, made JSON: `{"format","width","height","bytes"}` and,
/// with `include_data`, `"base64"`.
struct ImageResponseSerializer: ResponseSerializer {
    static let name = SerializerName.image.rawValue
    /// AF's ten image types, plus image/webp and image/jpg.
    static let defaultContentTypes = [
        "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon",
        "image/bmp", "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp", "image/jpg",
    ]

    let validation: ResponseValidation
    let options: ImageOptions

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            let info = try ImageInspector.inspect(body)
            if options.includeData { try budget.charge(Base64.encodedLength(body.count) + 100, "the image in base64") }
            var out = Array("{\"format\":\"\(info.format)\",\"width\":\(info.width),\"height\":\(info.height),\"bytes\":\(body.count)".utf8)
            if options.includeData {
                out.append(contentsOf: ",\"base64\":\"".utf8)
                out.append(contentsOf: Base64.encode(body))
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: "}"))
            return NormalizedJSON(trusted: out)
        }
    }
}
