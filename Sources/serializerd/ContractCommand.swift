import ArgumentParser
import Contracts
import HTTPCore
import Proxy
import Serializers
import Tapes

/// `serializerd contract`: contracts from recordings (DESIGN §10).
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Learn an OpenAPI document from a route's tape.",
        subcommands: [Learn.self]
    )

    struct Learn: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an OpenAPI 3.1 document learned from a route's tape to stdout: a path per endpoint, a response schema per status.",
            discussion: "Each recorded answer goes through the route's serializers as a replay would; the document is ready to be the route's contract.openapi, and `serializerd tape verify` then checks the tape against it."
        )

        @OptionGroup var config: ConfigOptions

        @Option(help: "The route whose tape is read.")
        var route: String

        func run() throws {
            try TapeCommand.fail {
                let loaded = try config.load(environment: ProcessEnvironment.current, state: ProcessState())
                guard let found = loaded.routes.first(where: { $0.name == route }) else {
                    throw TapeCommand.Failure("no route named '\(route)' in \(loaded.source)")
                }
                guard let tape = found.tape?.tape else { throw TapeCommand.Failure("route '\(route)' has no tape (tape: {mode: …})") }
                guard !tape.entries.isEmpty else { throw TapeCommand.Failure("\(tape.path): no recorded exchanges to learn from") }
                let shapes = RouteShapes(route: route)
                for entry in tape.entries {
                    let (outcome, _) = found.serialize(UpstreamResponse(status: entry.status, contentType: entry.contentType, body: entry.responseBody))
                    guard let value = outcome.value else { continue }
                    let endpoint = ShapeEndpoint.key(method: entry.request.method,
                                                     path: Verification.remainder(entry.request.pathAndQuery.path, route: found))
                    value.bytes.withUnsafeBufferPointer { _ = shapes.observe(endpoint: endpoint, status: entry.status, body: $0, after: .max, now: 0) }
                }
                var out: [UInt8] = []
                PrettyJSON.write(shapes.document(title: route), into: &out, indent: 0)
                out.append(0x0A)
                StandardStreams.write(out)
            }
        }
    }
}

/// JSON with two-space indentation: a learned document is meant to be read and kept in git.
enum PrettyJSON {
    static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int) {
        let pad = Array(repeating: UInt8(ascii: " "), count: indent + 2)
        switch value {
        case .object(let members) where !members.isEmpty:
            out += Array("{\n".utf8)
            for (k, (name, member)) in members.enumerated() {
                out += pad + NormalizedJSON(.string(name)).bytes + Array(": ".utf8)
                write(member, into: &out, indent: indent + 2)
                out += Array((k + 1 < members.count ? ",\n" : "\n").utf8)
            }
            out += Array(repeating: UInt8(ascii: " "), count: indent) + [UInt8(ascii: "}")]
        case .array(let items) where !items.isEmpty:
            out += Array("[\n".utf8)
            for (k, item) in items.enumerated() {
                out += pad
                write(item, into: &out, indent: indent + 2)
                out += Array((k + 1 < items.count ? ",\n" : "\n").utf8)
            }
            out += Array(repeating: UInt8(ascii: " "), count: indent) + [UInt8(ascii: "]")]
        default:
            out += NormalizedJSON(value).bytes
        }
    }
}
