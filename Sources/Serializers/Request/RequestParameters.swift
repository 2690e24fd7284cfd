/// Reads the client's body as AF parameters: a JSON object, a form, or a property
/// list dictionary, chosen by Content-Type. Anything else — another type, a
/// top-level array or scalar, a malformed body — is a 400.
public enum RequestParameters {
    /// The parameters as normalized JSON, never a tree: what the json request serializer
    /// sends, and what the others walk (`JSONTape`). nil when the body is empty.
    public static func json(_ request: RequestInput) throws(RequestSerializationError) -> [UInt8]? {
        guard !request.body.isEmpty else { return nil }
        guard let contentType = request.contentType, let media = MediaType(contentType) else {
            throw RequestSerializationError("a request body needs a Content-Type: application/json, application/x-www-form-urlencoded or application/x-plist")
        }
        let budget = request.budget
        let json: [UInt8]
        do throws(TranscodeError) {
            if isJSON(media) {
                do throws(JSONError) {
                    json = try JSONNormalizer.normalize(request.body, options: JSONReadOptions(maxDepth: request.maxDepth))
                } catch { throw TranscodeError(error) }
            } else if media.essence == "application/x-www-form-urlencoded" {
                json = try FormDecoder.transcode(request.body, charset: media.charset, maxDepth: request.maxDepth, budget: budget).bytes
            } else if isPlist(media) {
                json = try PlistTranscoder.transcode(request.body, maxDepth: request.maxDepth, budget: budget).bytes
            } else {
                throw unreadable(media)
            }
        } catch {
            throw RequestSerializationError("request body is not valid \(media.essence): \(error.description)")
        }
        guard json.first == UInt8(ascii: "{") else {
            throw RequestSerializationError("request parameters must be an object (a JSON object, form or plist dictionary), found \(kind(firstByte: json.first))")
        }
        do throws(TranscodeError) { try budget.charge(json.count, "the parameters as JSON") } catch {
            throw RequestSerializationError("request parameters: \(error.description)")
        }
        return json
    }

    static func isJSON(_ media: MediaType) -> Bool {
        media.essence == "application/json" || media.essence == "text/json" || media.suffix == "json"
    }

    static func isPlist(_ media: MediaType) -> Bool {
        ["application/x-plist", "application/xml", "text/xml"].contains(media.essence)
    }

    static func unreadable(_ media: MediaType) -> TranscodeError {
        TranscodeError("parameters cannot be read from \(media.essence) (expected application/json, application/x-www-form-urlencoded or application/x-plist)")
    }

    static func kind(firstByte: UInt8?) -> String {
        switch firstByte {
        case UInt8(ascii: "n"): return "null"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "["): return "an array"
        default: return "a number"
        }
    }
}
