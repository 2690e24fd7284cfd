/// AFJSONResponseSerializer: validates, then normalizes the JSON in one streaming pass.
struct JSONResponseSerializer: ResponseSerializer {
    static let name = "json"
    static let defaultContentTypes = ["application/json", "text/json", "text/javascript", "*/*+json"]

    let validation: ResponseValidation
    let options: JSONReadOptions

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body) throws(TranscodeError) in
            do throws(JSONError) {
                return NormalizedJSON(trusted: try JSONNormalizer.normalize(body, options: options))
            } catch {
                throw TranscodeError(error)
            }
        }
    }
}
