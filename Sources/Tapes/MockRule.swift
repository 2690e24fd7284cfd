import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// One `mocks:` rule of a route (DESIGN §2): an answer given in the upstream's place, in
/// the upstream's format (the route's serializer then reads it like any other).
public struct MockRule: Sendable {
    public enum Kind: Sendable {
        /// `when` + `respond`.
        case respond(When, MockAnswer)
        /// `map_dir`: the path after the prefix names a file under the directory (its real
        /// path, resolved at load).
        case mapDirectory(String)
    }

    public struct When: Sendable {
        public var method: String?
        /// A glob on the path after the prefix: `*` within a segment, `**` across `/`.
        public var path: String?
        /// Exact query values (names as sent).
        public var query: [(String, String)]
        /// Exact header values (names case-insensitive).
        public var header: [(String, String)]

        public init(method: String?, path: String?, query: [(String, String)], header: [(String, String)]) {
            self.method = method
            self.path = path
            self.query = query
            self.header = header
        }
    }

    public let name: String
    public let kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }
}

/// What a mock answers: a status, headers and a body, as an upstream would send them.
public struct MockAnswer: Sendable {
    public var status: Int
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(status: Int, headers: HeaderFields, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var contentType: String? { headers.first("Content-Type") }
}
