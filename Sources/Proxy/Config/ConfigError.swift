/// A configuration problem, located like a compiler diagnostic:
/// `config/serializerd.yaml:12:5: error: routes[0].timeout: expected a duration like 250ms, 10s or 2m, found 'soon'`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let column: Int?
    /// Dotted key path (`routes[0].response.serializer`); empty for file-level problems.
    public let path: String
    public let message: String

    public init(file: String, line: Int?, column: Int?, path: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): error: " + (path.isEmpty ? message : "\(path): \(message)")
    }
}
