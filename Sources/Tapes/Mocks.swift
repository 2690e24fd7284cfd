import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// A request as mocks see it: the client's method, the path after the route's prefix,
/// its query and headers.
public struct MockRequest {
    public var method: String
    public var path: String
    public var query: String?
    public var fields: HeaderFields

    public init(method: String, path: String, query: String?, fields: HeaderFields) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = fields
    }
}

/// The outcome of a route's mocks for one request.
public enum MockOutcome {
    case answer(MockAnswer, rule: String)
    /// The path escapes a `map_dir` (`..`, a symlink out of it): refused like an upstream path.
    case escapes(String)
    /// No rule answered: the tape, then the upstream.
    case none
}

public enum Mocks {
    /// The first rule that answers `request`, in order; a `map_dir` without the file goes
    /// on to the next rule. Files larger than `maxBytes` are not read (no answer).
    public static func answer(_ rules: [MockRule], _ request: MockRequest, maxBytes: Int) -> MockOutcome {
        for rule in rules {
            switch rule.kind {
            case .respond(let when, let answer):
                if matches(when, request) { return .answer(answer, rule: rule.name) }
            case .mapDirectory(let root):
                switch MapDirectory.file(root: root, path: request.path, maxBytes: maxBytes) {
                case .found(let body, let type): return .answer(MockAnswer(status: 200, headers: HeaderFields([("Content-Type", type)]), body: body), rule: rule.name)
                case .escapes(let why): return .escapes(why)
                case .missing: continue
                }
            }
        }
        return .none
    }

    static func matches(_ when: MockRule.When, _ request: MockRequest) -> Bool {
        if let method = when.method, method != request.method { return false }
        if let pattern = when.path, !Glob.matches(Array(pattern.utf8)[...], Array(request.path.utf8)[...]) { return false }
        if !when.query.isEmpty {
            let pairs = (request.query ?? "").split(separator: "&").map { pair -> (String, String) in
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(decoding: Percent.decode(Array(halves[0].utf8)), as: UTF8.self),
                        halves.count > 1 ? String(decoding: Percent.decode(Array(halves[1].utf8)), as: UTF8.self) : "")
            }
            for (name, value) in when.query where !pairs.contains(where: { $0.0 == name && $0.1 == value }) { return false }
        }
        for (name, value) in when.header where request.fields.first(name) != value { return false }
        return true
    }
}
