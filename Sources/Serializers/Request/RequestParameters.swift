/// Reads the client's body as AF parameters: a JSON object, a form, or a property
/// list dictionary, chosen by Content-Type. Anything else — another type, a
/// top-level array or scalar, a malformed body — is a 400.
public enum RequestParameters {
    /// nil when the body is empty (no parameters).
    public static func decode(_ request: RequestInput) throws(RequestSerializationError) -> [(String, JSONValue)]? {
        guard !request.body.isEmpty else { return nil }
        guard let contentType = request.contentType, let media = MediaType(contentType) else {
            throw RequestSerializationError("a request body needs a Content-Type: application/json, application/x-www-form-urlencoded or application/x-plist")
        }
        let value: JSONValue
        do throws(TranscodeError) {
            value = try parse(request.body, media, maxDepth: request.maxDepth, budget: request.budget)
        } catch {
            throw RequestSerializationError("request body is not valid \(media.essence): \(error.description)")
        }
        guard case .object(let members) = value else {
            throw RequestSerializationError("request parameters must be an object (a JSON object, form or plist dictionary), found \(kind(value))")
        }
        return members
    }

    static func parse(_ body: [UInt8], _ media: MediaType, maxDepth: Int, budget: OutputBudget) throws(TranscodeError) -> JSONValue {
        if media.essence == "application/json" || media.essence == "text/json" || media.suffix == "json" {
            do throws(JSONError) { return try JSONValue.parse(body, options: JSONReadOptions(maxDepth: maxDepth)) } catch { throw TranscodeError(error) }
        }
        switch media.essence {
        case "application/x-www-form-urlencoded":
            return try FormDecoder.decode(body, charset: media.charset, maxDepth: maxDepth)
        case "application/x-plist", "application/xml", "text/xml":
            return try PlistTranscoder.transcode(body, maxDepth: maxDepth, budget: budget).value
        default:
            throw TranscodeError("parameters cannot be read from \(media.essence) (expected application/json, application/x-www-form-urlencoded or application/x-plist)")
        }
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
