/// One way to damage an upstream's answer before the route's serializer reads it
/// (DESIGN §3), as real upstreams do.
public enum ChaosOperation: Sendable, Equatable {
    /// The member or element is removed.
    case drop(JSONPointer)
    /// The value becomes null.
    case null(JSONPointer)
    /// A number (or boolean) becomes a string of its text.
    case string(JSONPointer)
    /// An array becomes its first element: the XML classic of a list of one.
    case singleton(JSONPointer)
    /// The body becomes an HTML error page, the status 200.
    case html200
    /// The answer's Content-Type becomes this.
    case contentType(String)

    /// How `Serializerd-Fault-Applied` names it.
    public var applied: String {
        switch self {
        case .drop(let p): "drop=\(p)"
        case .null(let p): "null=\(p)"
        case .string(let p): "string=\(p)"
        case .singleton(let p): "singleton=\(p)"
        case .html200: "html_200"
        case .contentType(let t): "content_type=\(t)"
        }
    }

    /// `drop=/a; html_200; content_type=text/plain`.
    public static func parse(_ text: String) throws(NetworkSyntaxError) -> [ChaosOperation] {
        var ops: [ChaosOperation] = []
        for (name, value) in try Directives.parse(text) { ops.append(try operation(name, value)) }
        return ops
    }

    static func operation(_ name: String, _ value: String?) throws(NetworkSyntaxError) -> ChaosOperation {
        func pointer() throws(NetworkSyntaxError) -> JSONPointer {
            guard let value else { throw NetworkSyntaxError("\(name) needs a JSON pointer: \(name)=/a/b") }
            return try JSONPointer(value)
        }
        switch name {
        case "drop": return .drop(try pointer())
        case "null": return .null(try pointer())
        case "string": return .string(try pointer())
        case "singleton": return .singleton(try pointer())
        case "html_200":
            guard value == nil else { throw NetworkSyntaxError("html_200 takes no value") }
            return .html200
        case "content_type":
            guard let value, !value.isEmpty, value.utf8.count <= 200,
                  value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw NetworkSyntaxError("content_type needs a media type of printable ASCII: content_type=text/plain")
            }
            return .contentType(value)
        default:
            throw NetworkSyntaxError("unknown chaos operation '\(name)' (drop, null, string, singleton, html_200, content_type)")
        }
    }
}
