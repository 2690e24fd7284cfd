import HTTPCore

/// `passthrough` (default): body and Content-Type forwarded as sent.
struct PassthroughRequestSerializer: RequestSerializer {
    func serialize(_ r: RequestInput) throws(RequestSerializationError) -> SerializedRequest {
        if r.method.equalsIgnoringASCIICase("HEAD") { return SerializedRequest(query: r.query, contentType: nil, body: []) }
        return SerializedRequest(query: r.query, contentType: r.contentType, body: r.body)
    }
}
