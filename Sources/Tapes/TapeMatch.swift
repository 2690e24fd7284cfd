// fuzz/har compiles these files into one module with the ones they use.
#if canImport(Serializers)
import Serializers
#endif
#if canImport(Telemetry)
import Telemetry
#endif

/// How a route's tape matches a request to a recording (DESIGN §2 `tape.match`): method,
/// path and query always (`ignore_query` names dropped, query order ignored), `headers`
/// whose values must be equal, and the body when `body` says so. Values that `capture`
/// redacts are matched by name only: the tape never held them.
public struct TapeMatch: Sendable, Equatable {
    public enum Body: String, Sendable, CaseIterable {
        case ignore, exact, json
    }

    /// Query parameter names left out of matching, lowercased.
    public var ignoreQuery: Set<String>
    /// Header names whose values must be equal, lowercased.
    public var headers: [String]
    public var body: Body
    /// JSON pointers (as tokens) left out when `body: json`.
    public var ignoreJSON: [[[UInt8]]]

    public init(ignoreQuery: [String] = [], headers: [String] = [], body: Body = .ignore, ignoreJSON: [[[UInt8]]] = []) {
        self.ignoreQuery = Set(ignoreQuery.map { $0.lowercased() })
        self.headers = headers.map { $0.lowercased() }
        self.body = body
        self.ignoreJSON = ignoreJSON
    }

    /// What matching compares of one request, each part comparable on its own (a miss
    /// names the parts that differ).
    public struct Parts: Sendable, Equatable {
        public var method: String
        public var path: String
        /// name=value pairs, sorted; a redacted value is empty.
        public var query: [String]
        /// One per `headers` name: its value, "" when redacted, nil when absent.
        public var headers: [String?]
        /// The body as compared (canonical JSON, or the bytes' hash), "" when ignored.
        public var body: String

        /// One string for the index, built in one buffer.
        public var key: String {
            var key = ""
            key.reserveCapacity(method.utf8.count + path.utf8.count + body.utf8.count + 8 + query.reduce(0) { $0 + $1.utf8.count + 1 })
            key += method
            key += " "
            key += path
            key += "?"
            for (k, pair) in query.enumerated() {
                if k > 0 { key += "&" }
                key += pair
            }
            for value in headers {
                key += "\n"
                if let value { key += "="; key += value } else { key += "-" }
            }
            key += "\n"
            key += body
            return key
        }
    }

    public func parts(_ request: TapeRequest, redaction: Redaction) -> Parts {
        let (path, query) = request.pathAndQuery
        var pairs: [String] = []
        if let query {
            for pair in query.split(separator: "&") {
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Redaction.formDecoded(halves[0]).lowercased()
                if ignoreQuery.contains(name) { continue }
                pairs.append(redaction.queryNames.contains(name) ? String(halves[0]) + "=" : String(pair))
            }
        }
        pairs.sort()
        let values = headers.map { name -> String? in
            guard let value = request.headers.first(name) else { return nil }
            return redaction.isRedactedHeader(name) ? "" : value
        }
        return Parts(method: request.method, path: String(path), query: pairs, headers: values, body: bodyKey(request, redaction: redaction))
    }

    func bodyKey(_ request: TapeRequest, redaction: Redaction) -> String {
        guard body != .ignore else { return "" }
        let bytes = redaction.body(request.body, contentType: request.headers.first("Content-Type")) ?? request.body
        if body == .json, let value = try? JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: true)),
           let canonical = try? Self.removing(ignoreJSON, from: value).encoded(canonical: true) {
            return "json:" + String(decoding: canonical, as: UTF8.self)
        }
        return "bytes:\(bytes.count):" + String(Self.fnv1a(bytes), radix: 16)
    }

    /// `value` without the members or elements the pointers name (`*` matches any).
    static func removing(_ pointers: [[[UInt8]]], from value: JSONValue) -> JSONValue {
        pointers.reduce(value) { removing($1[...], from: $0) }
    }

    static func removing(_ tokens: ArraySlice<[UInt8]>, from value: JSONValue) -> JSONValue {
        guard let token = tokens.first else { return value }
        let any = token == [UInt8(ascii: "*")]
        let name = String(decoding: token, as: UTF8.self)
        let last = tokens.count == 1
        switch value {
        case .object(let members):
            return .object(members.compactMap { member in
                guard any || member.0 == name else { return member }
                return last ? nil : (member.0, removing(tokens.dropFirst(), from: member.1))
            })
        case .array(let items):
            return .array(items.enumerated().compactMap { index, item in
                guard any || String(index) == name else { return item }
                return last ? nil : removing(tokens.dropFirst(), from: item)
            })
        default:
            return value
        }
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// The parts in which `recorded` differs from `asked`, in words: "query page", "header
    /// x-tenant", "body", "method".
    public func differences(_ asked: Parts, _ recorded: Parts) -> [String] {
        var out: [String] = []
        if asked.method != recorded.method { out.append("method \(recorded.method)") }
        if asked.path != recorded.path { out.append("path") }
        let askedNames = Set(asked.query.map(Self.name)), recordedNames = Set(recorded.query.map(Self.name))
        let differing = Set(asked.query).symmetricDifference(recorded.query).map(Self.name)
        for name in Set(differing).sorted() {
            out.append(askedNames.contains(name) && recordedNames.contains(name) ? "query \(name)"
                       : askedNames.contains(name) ? "query \(name) (not recorded)" : "query \(name) (missing)")
        }
        for (k, name) in headers.enumerated() where asked.headers[k] != recorded.headers[k] { out.append("header \(name)") }
        if asked.body != recorded.body { out.append("body") }
        return out
    }

    static func name(_ pair: String) -> String { String(pair.prefix { $0 != "=" }) }
}
