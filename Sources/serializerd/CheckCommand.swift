import ArgumentParser
import Proxy

/// `serializerd check`: load and validate the configuration without starting. Every
/// problem of the file is reported in one run, in file order; a valid file lists the
/// routes it compiles to.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate the configuration file and exit (0 when valid), listing every error or the compiled routes."
    )

    @OptionGroup var config: ConfigOptions

    @Argument(help: "The configuration file (the same as --config).")
    var file: String?

    func validate() throws {
        if file != nil && config.path != nil { throw ValidationError("give the file either as an argument or with --config, not both") }
    }

    func run() throws {
        var options = config
        if let file { options.path = file }
        do {
            let loaded = try options.load(environment: ProcessEnvironment.current, state: ProcessState())
            StandardStreams.write(Array((Self.summary(loaded) + "\n").utf8))
        } catch let failure as ConfigFailure {
            var text = failure.message + "\n"
            if failure.count > 1 { text += "\(failure.count) errors\n" }
            StandardStreams.write(Array(text.utf8), fd: 2)
            throw ExitCode(1)
        }
    }

    /// `file: ok, N routes` and one aligned line per route: what matches, where it goes,
    /// which serializers run.
    static func summary(_ config: ServerConfig) -> String {
        let rows = config.routes.map { route -> [String] in
            var match = (route.host.map { "http://\($0)" } ?? "") + route.prefix
            if let methods = route.methods { match += " " + methods.sorted().joined(separator: ",") }
            var response = route.response.serializer.rawValue
            if let members = route.response.serializers { response += "(" + members.map(\.rawValue).joined(separator: ",") + ")" }
            return [route.name, match, "→ " + route.upstream.description, "request: " + route.requestSerializerName,
                    "response: " + response]
        }
        var lines = ["\(config.source): ok, \(config.routes.count) route\(config.routes.count == 1 ? "" : "s"), listening on \(config.listen)"]
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            lines.append("  " + cells.joined(separator: "  "))
        }
        for route in config.routes where route.tls?.verify == false {
            lines.append("warning: route '\(route.name)': \(Route.unverifiedTLS)")
        }
        return lines.joined(separator: "\n")
    }
}
