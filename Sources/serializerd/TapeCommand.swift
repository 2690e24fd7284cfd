import ArgumentParser
import HTTPCore
import Proxy
import Serializers
import Tapes

/// `serializerd tape`: work on tapes offline (DESIGN §7).
struct TapeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tape",
        abstract: "Import a HAR into a route's tape, verify tapes against today's config, or redact a tape.",
        subcommands: [Import.self, Verify.self, Redact.self]
    )

    /// A HAR file's entries (and how many had no answer), or a message for stderr and exit 1.
    static func read(_ path: String) throws -> HARCodec.File {
        do {
            let bytes = try StandardStreams.readAll(path: path, limit: TapeStore.maxFileBytes)
            return try HARCodec.decodeFile(bytes)
        } catch let error as InputTooLarge {
            throw Failure("\(path): larger than \(error.limit) bytes, the most a tape may be")
        } catch let error as HARError {
            throw Failure("\(path): \(error.message)")
        } catch {
            throw Failure("\(path): cannot read (\(ConfigOptions.reason(error)))")
        }
    }

    /// Printed on stderr, exit 1.
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static func fail(_ run: () throws -> Void) throws {
        do { try run() } catch let failure as Failure {
            StandardStreams.write(Array(("serializerd: error: " + failure.message + "\n").utf8), fd: 2)
            throw ExitCode(1)
        } catch let failure as ConfigFailure {
            StandardStreams.write(Array((failure.message + "\n").utf8), fd: 2)
            throw ExitCode(1)
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Append a HAR's entries (from a browser, another proxy, /-/recent?format=har) to a route's tape, redacted by the config's capture.",
            discussion: "Run it while the daemon is not recording that route; a reload (SIGHUP) then replays the imported entries."
        )

        @Argument(help: "The HAR file.")
        var file: String

        @Option(help: "The route whose tape receives the entries.")
        var route: String

        @OptionGroup var config: ConfigOptions

        func run() throws {
            try TapeCommand.fail {
                let state = ProcessState()
                let loaded = try config.load(environment: ProcessEnvironment.current, state: state)
                guard let target = loaded.routes.first(where: { $0.name == route }) else {
                    throw Failure("no route named '\(route)' in \(loaded.source) (routes: \(loaded.routes.map(\.name).joined(separator: ", ")))")
                }
                var read = try TapeCommand.read(file)
                if let failure = TapeFile.makeDirectory(loaded.tapesDir) { throw Failure("tapes.dir \(failure)") }
                let tape = try target.tape?.tape ?? TapeCommand.tape(for: target, config: loaded, store: state.tapes)
                let imported = read.entries.count
                // Each entry is let go once recorded: the file's entries are not held twice.
                read.entries.reverse()
                while let entry = read.entries.popLast() { tape.record(entry.redacted(by: loaded.capture)) }
                if let failure = state.tapes.flush().first { throw Failure(failure) }
                let skipped = read.skipped > 0 ? ", \(read.skipped) skipped: saved without an answer (status 0)" : ""
                StandardStreams.write(Array("imported \(imported) entries into \(tape.path) (\(tape.count) in all\(skipped))\n".utf8))
            }
        }
    }

    /// The tape of a route that has none configured (an import into `<tapes.dir>/<route>.har`).
    static func tape(for route: Route, config: ServerConfig, store: TapeStore) throws -> Tape {
        let path = config.tapesDir + (config.tapesDir.hasSuffix("/") ? "" : "/") + route.name + ".har"
        do { return try store.tape(path: path, match: TapeMatch(), redaction: config.capture) } catch {
            throw Failure("\(path): \(error.message)")
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay every recorded exchange through today's config, offline, and list those that would now fail (exit 1 if any).",
            discussion: "A serializer contract check for CI: change a route's response settings, run verify, see which recorded answers the app would no longer get."
        )

        @OptionGroup var config: ConfigOptions

        @Option(help: "Only this route's tape.")
        var route: String?

        func run() throws {
            var failed = 0
            try TapeCommand.fail {
                let loaded = try config.load(environment: ProcessEnvironment.current, state: ProcessState())
                let routes = loaded.routes.filter { $0.tape != nil && (route == nil || $0.name == route) }
                if let route, routes.isEmpty { throw Failure("no route named '\(route)' has a tape in \(loaded.source)") }
                var lines: [String] = []
                for route in routes {
                    guard let tape = route.tape?.tape else { continue }
                    let (checked, failures) = Verification.run(tape.entries, route: route, maxDepth: loaded.limits.maxJSONDepth)
                    failed += failures.count
                    lines.append("\(route.name): \(checked) entries, \(checked - failures.count) pass, \(failures.count) would fail (\(tape.path))")
                    lines += failures.map { "  " + $0 }
                }
                StandardStreams.write(Array((lines.joined(separator: "\n") + "\n").utf8))
            }
            if failed > 0 { throw ExitCode(1) }
        }
    }

    struct Redact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the config's capture redaction to an existing tape file, in place (rewritten as serializerd writes tapes).")

        @Argument(help: "The tape (HAR) file.")
        var file: String

        @OptionGroup var config: ConfigOptions

        func run() throws {
            try TapeCommand.fail {
                let loaded = try config.load(environment: ProcessEnvironment.current, state: ProcessState())
                let entries = try TapeCommand.read(file).entries.map { $0.redacted(by: loaded.capture) }
                if let failure = TapeStore.rewrite(file, entries: entries) { throw Failure(failure) }
                StandardStreams.write(Array("redacted \(entries.count) entries in \(file)\n".utf8))
            }
        }
    }
}

/// `tape verify`'s check: each entry's answer through the route's serializers, as a
/// replay would run it, then through its contract (a violation is listed in either mode).
enum Verification {
    static func run(_ entries: [TapeEntry], route: Route, maxDepth: Int) -> (checked: Int, failures: [String]) {
        var failures: [String] = []
        for (k, entry) in entries.enumerated() {
            let (path, query) = entry.request.pathAndQuery
            var (outcome, _) = route.serialize(UpstreamResponse(status: entry.status, contentType: entry.contentType, body: entry.responseBody))
            if let contract = route.contract, outcome.succeeded, let value = outcome.value {
                let violations = contract.check(value, maxDepth: maxDepth, path: remainder(path, route: route), method: entry.request.method,
                                                status: entry.status)
                if !violations.isEmpty { outcome = SerializationResult(value: value, error: contract.failure(violations), serializer: outcome.serializer) }
            }
            guard !outcome.succeeded else { continue }
            let error = outcome.error
            let reason = error.map { "\($0.typeSuffix): \($0.detail ?? $0.title)" } ?? "no value"
            failures.append("entry \(k): \(entry.request.method) \(path)\(query.map { "?" + $0 } ?? "") (\(entry.status)) → \(reason)")
        }
        return (entries.count, failures)
    }

    /// The path after the route's prefix: the upstream's after its base path.
    static func remainder(_ path: Substring, route: Route) -> Substring {
        var remainder = path.hasPrefix(route.upstream.path) ? path.dropFirst(route.upstream.path.count) : path
        if remainder.hasPrefix("/") { remainder = remainder.dropFirst() }
        return remainder
    }
}
