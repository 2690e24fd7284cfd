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
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public var contentType: String? { headers.first { $0.0.equalsIgnoringASCIICase("Content-Type") }?.1 }
}

/// A request as mocks see it: the client's method, the path after the route's prefix,
/// its query and headers.
public struct MockRequest {
    public var method: String
    public var path: String
    public var query: String?
    public var header: (String) -> String?

    public init(method: String, path: String, query: String?, header: @escaping (String) -> String?) {
        self.method = method
        self.path = path
        self.query = query
        self.header = header
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
                case .found(let body, let type): return .answer(MockAnswer(status: 200, headers: [("Content-Type", type)], body: body), rule: rule.name)
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
        for (name, value) in when.header where request.header(name) != value { return false }
        return true
    }
}

/// `*` matches within one path segment, `**` across segments, anything else itself. The
/// set of text positions each pattern step can reach, one pass a step: linear in the path
/// for any pattern (backtracking would be exponential in the number of stars).
enum Glob {
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        let text = Array(text), n = text.count
        var reach = [Bool](repeating: false, count: n + 1)
        reach[0] = true
        var p = pattern.startIndex
        while p < pattern.endIndex {
            var next = [Bool](repeating: false, count: n + 1)
            if pattern[p] == UInt8(ascii: "*") {
                let double = p + 1 < pattern.endIndex && pattern[p + 1] == UInt8(ascii: "*")
                var carry = false
                for i in 0...n {
                    if reach[i] { carry = true }
                    next[i] = carry
                    if i < n && !double && text[i] == UInt8(ascii: "/") { carry = false }
                }
                p += double ? 2 : 1
            } else {
                for i in 0..<n where reach[i] && text[i] == pattern[p] { next[i + 1] = true }
                p += 1
            }
            reach = next
        }
        return reach[n]
    }
}

/// Map local: a file under a directory, never outside it.
enum MapDirectory {
    enum Found {
        case found([UInt8], String)
        case escapes(String)
        case missing
    }

    static func file(root: String, path: String, maxBytes: Int) -> Found {
        let decoded = String(decoding: Percent.decode(Array(path.utf8)), as: UTF8.self)
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == ".." || $0 == "." }), !decoded.utf8.contains(0), !decoded.hasPrefix("/") else {
            return .escapes("the path '\(path)' leaves the route's map_dir")
        }
        guard !decoded.isEmpty, !decoded.hasSuffix("/") else { return .missing }
        guard let real = realpath(root + "/" + decoded, nil) else { return .missing }
        defer { free(real) }
        let resolved = String(cString: real)
        guard resolved.hasPrefix(root + "/") else { return .escapes("the path '\(path)' resolves outside the route's map_dir") }
        var info = stat()
        guard stat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= maxBytes else { return .missing }
        let fd = open(resolved, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .missing }
        defer { close(fd) }
        var body = [UInt8](repeating: 0, count: Int(info.st_size))
        var at = 0
        while at < body.count {
            let n = body.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + at, $0.count - at) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            at += n
        }
        return .found(Array(body[0..<at]), contentType(resolved))
    }

    /// The Content-Type a file's extension gives (DESIGN §2).
    static func contentType(_ path: String) -> String {
        let ext = path.split(separator: "/").last.flatMap { name in name.contains(".") ? name.split(separator: ".").last : nil }.map { $0.lowercased() } ?? ""
        switch ext {
        case "json": return "application/json"
        case "xml": return "application/xml"
        case "plist": return "application/x-plist"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        default: return "application/octet-stream"
        }
    }
}
