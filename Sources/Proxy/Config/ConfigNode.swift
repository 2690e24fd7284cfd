import Yams
import HTTPCore

/// Every problem found in one file, so one `check` run reports them all. Duplicates
/// (a `defaults:` value merged into several routes) are kept once, the first path
/// (`defaults.…`, checked before the routes) winning.
final class Diagnostics {
    private(set) var errors: [ConfigError] = []

    /// Thrown to stop a parse whose problems are already recorded; never reported itself.
    static let recorded = ConfigError(file: "", line: nil, column: nil, path: "", message: "(recorded)")

    func record(_ error: ConfigError) {
        if error == Diagnostics.recorded { return }
        let duplicate = errors.contains {
            $0.line != nil && $0.line == error.line && $0.column == error.column && $0.message == error.message
        }
        if !duplicate { errors.append(error) }
    }

    /// The file's errors in file order.
    var sorted: [ConfigError] {
        errors.enumerated().sorted { a, b in
            (a.element.line ?? 0, a.element.column ?? 0, a.offset) < (b.element.line ?? 0, b.element.column ?? 0, b.offset)
        }.map(\.element)
    }
}

/// A YAML node with its key path and source position, so every problem can be
/// reported as `file:line:column: error: path: message`.
struct ConfigNode {
    let node: Node
    let path: String
    let file: String
    let environment: [String: String]
    /// Where problems go so parsing can go on past them.
    let diagnostics: Diagnostics

    /// Runs `parse`; a problem is recorded and nil returned, so the caller goes on.
    func attempt<T>(_ parse: () throws(ConfigError) -> T) -> T? {
        do throws(ConfigError) { return try parse() } catch {
            diagnostics.record(error)
            return nil
        }
    }

    func error(_ message: String) -> ConfigError {
        ConfigError(file: file, line: node.mark?.line, column: node.mark?.column, path: path, message: message)
    }

    func child(_ node: Node, _ key: String) -> ConfigNode {
        ConfigNode(node: node, path: path.isEmpty ? key : "\(path).\(key)", file: file, environment: environment, diagnostics: diagnostics)
    }

    var isNull: Bool {
        guard case .scalar(let s) = node else { return false }
        return s.style == .plain && (s.string == "null" || s.string == "~" || s.string.isEmpty)
    }

    /// The members of a mapping, checked against the keys this block allows. Unknown and
    /// duplicate keys are recorded and left out; the block's other keys are still read.
    func mapping(allowed: [String]) throws(ConfigError) -> [String: ConfigNode] {
        guard case .mapping(let mapping) = node else { throw error("expected a mapping") }
        var members: [String: ConfigNode] = [:]
        for (keyNode, value) in mapping {
            guard case .scalar(let key) = keyNode else {
                diagnostics.record(ConfigNode(node: keyNode, path: path, file: file, environment: environment, diagnostics: diagnostics)
                    .error("mapping keys must be strings"))
                continue
            }
            let keyPath = ConfigNode(node: keyNode, path: path.isEmpty ? key.string : "\(path).\(key.string)",
                                     file: file, environment: environment, diagnostics: diagnostics)
            guard allowed.contains(key.string) else {
                diagnostics.record(keyPath.error("unknown key (expected one of: \(allowed.joined(separator: ", ")))"))
                continue
            }
            guard members[key.string] == nil else {
                diagnostics.record(keyPath.error("duplicate key"))
                continue
            }
            members[key.string] = child(value, key.string)
        }
        return members
    }

    /// A mapping's members in the order the file writes them (first error first).
    static func inSourceOrder(_ members: [String: ConfigNode]) -> [(String, ConfigNode)] {
        members.sorted { a, b in
            (a.value.node.mark?.line ?? 0, a.value.node.mark?.column ?? 0) < (b.value.node.mark?.line ?? 0, b.value.node.mark?.column ?? 0)
        }
    }

    func sequence() throws(ConfigError) -> [ConfigNode] {
        guard case .sequence(let items) = node else { throw error("expected a list") }
        return items.enumerated().map {
            ConfigNode(node: $0.element, path: "\(path)[\($0.offset)]", file: file, environment: environment, diagnostics: diagnostics)
        }
    }

    /// A scalar as text, with `${NAME}` replaced from the environment.
    func string() throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a string") }
        return try substitute(scalar.string)
    }

    func substitute(_ text: String) throws(ConfigError) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "${") {
            result += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else { throw error("unterminated ${ in '\(text)'") }
            let name = String(rest[open.upperBound..<close])
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw error("'${\(name)}' is not an environment variable reference")
            }
            guard let value = environment[name] else { throw error("environment variable \(name) is not set") }
            result += value
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    func bool() throws(ConfigError) -> Bool {
        switch try string() {
        case "true": return true
        case "false": return false
        case let other: throw error("expected true or false, found '\(other)'")
        }
    }

    func int(in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let text = try string()
        guard let value = Int(text), range.contains(value) else {
            throw error("expected an integer from \(range.lowerBound) to \(range.upperBound), found '\(text)'")
        }
        return value
    }

    func seconds() throws(ConfigError) -> Double {
        let text = try string()
        guard let value = Units.seconds(text), value > 0 else {
            throw error("expected a positive duration like 250ms, 10s or 2m, found '\(text)'")
        }
        return value
    }

    func bytes() throws(ConfigError) -> Int {
        let text = try string()
        guard let value = Units.bytes(text), value > 0 else {
            throw error("expected a positive size like 512KiB or 32MiB, found '\(text)'")
        }
        return value
    }

    func strings() throws(ConfigError) -> [String] {
        var values: [String] = []
        for item in try sequence() { values.append(try item.string()) }
        return values
    }

    /// Merges `defaults` under this mapping: keys the route sets win, nested mappings
    /// merge key by key.
    func merged(withDefaults defaults: Node?) -> ConfigNode {
        guard let defaults, case .mapping(let base) = defaults, case .mapping(let own) = node else { return self }
        return ConfigNode(node: .mapping(Self.merge(own, under: base)), path: path, file: file, environment: environment,
                          diagnostics: diagnostics)
    }

    static func merge(_ own: Node.Mapping, under base: Node.Mapping) -> Node.Mapping {
        var result = own
        for (key, value) in base {
            if let mine = own[key] {
                if case .mapping(let a) = mine, case .mapping(let b) = value { result[key] = .mapping(merge(a, under: b)) }
            } else {
                result[key] = value
            }
        }
        return result
    }
}
