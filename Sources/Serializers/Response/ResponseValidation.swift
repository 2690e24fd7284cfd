/// AF's `validateResponse:data:error:` as a value: acceptable status codes and media
/// types, plus the template every serializer follows around its transcoder.
public struct ResponseValidation: Sendable, Equatable {
    /// nil disables the check.
    public var statusCodes: StatusCodeSet?
    /// nil disables the check.
    public var contentTypes: [MediaRange]?
    /// `limits.max_response_body`: the most JSON one body may become.
    public var maxOutput: Int

    public init(statusCodes: StatusCodeSet?, contentTypes: [MediaRange]?, maxOutput: Int = OutputBudget.defaultCap) {
        self.statusCodes = statusCodes
        self.contentTypes = contentTypes
        self.maxOutput = maxOutput
    }

    /// AF's order: the content-type error first, the status error on top of it. An
    /// empty body skips the content-type check. A missing Content-Type is acceptable
    /// only to a disabled check or a `*/*` entry.
    public func validate(_ response: UpstreamResponse) -> SerializationError? {
        var error: SerializationError?
        if let contentTypes, !response.body.isEmpty {
            let media = response.mediaType
            let ok = contentTypes.contains { range in
                if let media { return range.matches(media) }
                return range.type == "*" && range.subtype == "*"
            }
            if !ok { error = .unacceptableContentType(media?.essence ?? response.contentType) }
        }
        if let statusCodes, !statusCodes.contains(response.status) {
            error = .unacceptableStatus(response.status, underlying: error)
        }
        return error
    }

    /// Validates, then transcodes like AF's serializers: no value after a content-type
    /// failure; `null` for an empty or single-space body; a parse failure goes on top
    /// of any status failure; a status failure keeps the parsed value.
    public func serialize(_ response: UpstreamResponse, as name: String,
                          transcode: ([UInt8], OutputBudget) throws(TranscodeError) -> NormalizedJSON) -> SerializationResult {
        let validationError = validate(response)
        if let validationError, validationError.involvesContentType {
            return SerializationResult(value: nil, error: validationError, serializer: name)
        }
        return serialize(body: response.body, as: name, validationError: validationError, transcode: transcode)
    }

    /// The transcoding half of `serialize(_:as:transcode:)`: for a body with no status or
    /// media type to check (a stream's event), or one that passed them.
    public func serialize(body: [UInt8], as name: String, validationError: SerializationError? = nil,
                          transcode: ([UInt8], OutputBudget) throws(TranscodeError) -> NormalizedJSON) -> SerializationResult {
        if body.isEmpty || body == [0x20] {
            return SerializationResult(value: .null, error: validationError, serializer: name)
        }
        do {
            let value = try transcode(body, OutputBudget(input: body.count, cap: maxOutput))
            return SerializationResult(value: value, error: validationError, serializer: name)
        } catch {
            let failure = SerializationError.serializationFailed(
                serializer: name, detail: error.description, underlying: validationError)
            return SerializationResult(value: nil, error: failure, serializer: name)
        }
    }
}

/// A transcoder's reason for refusing a body: what was expected and where.
public struct TranscodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
    public init(_ json: JSONError) { self.description = json.description }
}
