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
