/// AFPropertyListResponseSerializer: XML or binary property lists as JSON.
struct PlistResponseSerializer: ResponseSerializer {
    static let name = SerializerName.plist.rawValue
    static let defaultContentTypes = ["application/x-plist"]

    let validation: ResponseValidation
    let maxDepth: Int

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try PlistTranscoder.transcode(body, maxDepth: maxDepth, budget: budget)
        }
    }
}
