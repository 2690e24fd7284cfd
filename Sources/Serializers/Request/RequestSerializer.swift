/// The client request as a request serializer sees it.
public struct RequestInput: Sendable {
    public var method: String
    /// The client's query string, without `?`; nil when it sent none.
    public var query: String?
    public var contentType: String?
    public var body: [UInt8]
    /// `limits.max_json_depth`: the deepest nesting a body may have, in any format.
    public var maxDepth: Int
    /// 4 × `limits.max_request_body`: the most a serializer may send upstream.
    public var maxOutput: Int

    public static let defaultMaxOutput = 4 << 20

    public init(method: String, query: String?, contentType: String?, body: [UInt8],
                maxDepth: Int = JSONReadOptions.defaultMaxDepth, maxOutput: Int = RequestInput.defaultMaxOutput) {
        self.method = method
        self.query = query
        self.contentType = contentType
        self.body = body
        self.maxDepth = maxDepth
        self.maxOutput = maxOutput
    }

    /// What this request's serializer may write: linear in the body, at most `maxOutput`.
    var budget: OutputBudget { OutputBudget(input: body.count, cap: maxOutput, capSetting: "4 × limits.max_request_body") }
}

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

/// The client's body cannot be read as parameters (→ 400 bad-request).
public struct RequestSerializationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The request side's one seam, AF's `requestBySerializingRequest:withParameters:error:`.
public protocol RequestSerializer: Sendable {
    func serialize(_ request: RequestInput) throws(RequestSerializationError) -> SerializedRequest
}

/// AF's `HTTPMethodsEncodingParametersInURI`.
enum URIEncodedMethods {
    static func contains(_ method: String) -> Bool {
        switch method.uppercased() {
        case "GET", "HEAD", "DELETE": return true
        default: return false
        }
    }

    /// Appends encoded parameters to the client's query (`&` after an existing one).
    static func join(_ query: String?, _ encoded: String) -> String? {
        guard !encoded.isEmpty else { return query }
        guard let query, !query.isEmpty else { return encoded }
        return query + "&" + encoded
    }
}
