/// The request side's one seam, AF's `requestBySerializingRequest:withParameters:error:`.
public protocol RequestSerializer: Sendable {
    func serialize(_ request: RequestInput) throws(RequestSerializationError) -> SerializedRequest
}
