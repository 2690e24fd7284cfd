/// AFPropertyListResponseSerializer: XML or binary property lists as JSON.
struct PlistResponseSerializer: ResponseSerializer {
    static let name = SerializerName.plist.rawValue
    static let defaultContentTypes = ["application/x-plist"]

    let validation: ResponseValidation
    let maxDepth: Int
    /// As the json serializer's: `keep` never looks at numbers.
    var notesNumbers = true

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try PlistTranscoder.transcode(body, maxDepth: maxDepth, budget: budget, notesNumbers: notesNumbers)
        }
    }
}
