/// AFXMLParserResponseSerializer, made JSON in xmltodict's convention.
struct XMLResponseSerializer: ResponseSerializer {
    static let name = SerializerName.xml.rawValue
    static let defaultContentTypes = ["application/xml", "text/xml", "*/*+xml"]

    let validation: ResponseValidation
    let maxDepth: Int
    let options: XMLOptions

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try XMLTranscoder.transcode(body, options: options, maxDepth: maxDepth, budget: budget)
        }
    }
}
