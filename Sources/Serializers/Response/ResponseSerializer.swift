/// The response side's one seam, AF's `responseObjectForResponse:data:error:`.
///
/// An implementation validates status and media type, then transcodes the body into
/// normalized JSON. Like AF it may return a value *and* an error (a status failure
/// whose body still parsed); the value then feeds the problem document.
public protocol ResponseSerializer: Sendable {
    func serialize(_ response: UpstreamResponse) -> SerializationResult
    /// One event's data of a stream (DESIGN §9), as a 200 answer with no media type.
    func serialize(event data: [UInt8]) -> SerializationResult
    /// The same, checking the output against a route's contract as it is made where the
    /// serializer can (its value's `vouch` then says so); others ignore `contract`.
    func serialize(_ response: UpstreamResponse, checking contract: OutputContract?) -> SerializationResult
}

extension ResponseSerializer {
    public func serialize(_ response: UpstreamResponse, checking contract: OutputContract?) -> SerializationResult {
        serialize(response)
    }

    public func serialize(event data: [UInt8]) -> SerializationResult {
        serialize(UpstreamResponse(status: 200, contentType: nil, body: data))
    }
}

public struct SerializationResult: Sendable, Equatable {
    /// What could be made of the body; `null` for an empty body.
    public var value: NormalizedJSON?
    /// nil on success.
    public var error: SerializationError?
    /// The serializer that produced the value (for compound, the member that won).
    public var serializer: String

    public init(value: NormalizedJSON?, error: SerializationError?, serializer: String) {
        self.value = value
        self.error = error
        self.serializer = serializer
    }

    public var succeeded: Bool { error == nil && value != nil }
}
