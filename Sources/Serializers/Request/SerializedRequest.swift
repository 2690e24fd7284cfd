/// What goes upstream: the query string, and the body with its Content-Type.
public struct SerializedRequest: Sendable, Equatable {
    public var query: String?
    /// nil: send no Content-Type.
    public var contentType: String?
    /// Empty: send no body.
    public var body: [UInt8]

    public init(query: String?, contentType: String?, body: [UInt8]) {
        self.query = query
        self.contentType = contentType
        self.body = body
    }
}
