import ArgumentParser
import HTTPCore
import Logging
import Proxy
import Serializers
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

/// `serializerd [serve]`: run the daemon until SIGTERM/SIGINT.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the proxy daemon (the default command)."
    )

    @OptionGroup var config: ConfigOptions

    @Option(name: .customLong("listen"), help: "Listen address (host:port), overriding the config and SERIALIZERD_LISTEN.")
    var listen: String?

    @Option(help: "Run without a config file: one route named default at prefix / to this upstream base URL.")
    var upstream: String?

    @Option(help: "With --upstream: the response serializer (json, xml, plist, image, form, text, raw, compound).")
    var serializer: String?

    func validate() throws {
        if upstream != nil && config.path != nil { throw ValidationError("--upstream runs without a config file; leave out --config") }
        if serializer != nil && upstream == nil { throw ValidationError("--serializer goes with --upstream (a config file names each route's serializer)") }
    }

    func run() throws {
        let environment = ProcessEnvironment.current
        let telemetry = Telemetry(output: LogOutput(fd: 1, environment: environment), version: ServerVersion.string,
                                  startTime: Clock.wall(), spans: OTLPSender())
        LoggingSystem.bootstrap { [output = telemetry.output] label in LineLogHandler(label: label, output: output) }
        let logger = telemetry.logger()
        let override = try ConfigOptions.listenOverride(flag: listen, environment: environment)
        // One for the life of the process: a reload finds the tapes, jars and
        // reachability the routes had.
        let state = ProcessState()
        let loaded: ServerConfig
        do { loaded = try load(environment, override, state: state) } catch let failure as ConfigFailure {
            // An event for log pipelines, and the plain message for the person at the terminal.
            logger.critical("config_invalid", metadata: ["error": "\(failure.message)"])
            StandardStreams.write(Array((failure.message + "\n").utf8), fd: 2)
            // EX_CONFIG: the unit's RestartPreventExitStatus stops systemd retrying a broken file.
            throw ExitCode(78)
        }
        let server = Server(config: loaded, state: state, telemetry: telemetry) { try load(ProcessEnvironment.current, override, state: state) }
        do { try server.run(environment: environment) } catch {
            logger.critical("start_failed", metadata: ["error": "\(error)"])
            StandardStreams.write(Array("serializerd: error: \(error)\n".utf8), fd: 2)
            throw ExitCode(1)
        }
    }

    func load(_ environment: [String: String], _ override: ListenAddress?, state: ProcessState) throws -> ServerConfig {
        var loaded = try upstream.map { try Self.singleRoute(upstream: $0, serializer: serializer, environment: environment, state: state) }
            ?? config.load(environment: environment, state: state)
        if let override { loaded.listen = override }
        return loaded
    }

    /// `--upstream URL [--serializer NAME]`: the config a one-route file would give, read by
    /// the same loader (so a bad URL or name gets the same message).
    static func singleRoute(upstream: String, serializer: String?, environment: [String: String], state: ProcessState) throws -> ServerConfig {
        // A JSON string is a YAML double-quoted scalar: the values cannot break the file.
        func quoted(_ text: String) -> String {
            var bytes: [UInt8] = []
            JSONEscaping.appendQuoted(text, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        var yaml = "routes:\n  - name: default\n    match: { prefix: / }\n    upstream: \(quoted(upstream))\n"
        if let serializer { yaml += "    response: { serializer: \(quoted(serializer)) }\n" }
        do { return try ConfigLoader.load(yaml: yaml, file: "--upstream", environment: environment, state: state) } catch {
            // The generated file's positions mean nothing to the user: the messages alone.
            let flag = { (e: ConfigError) in e.path.hasSuffix(".upstream") ? "--upstream: " : e.path.contains("serializer") ? "--serializer: " : "" }
            throw ConfigFailure(message: error.errors.map { "serializerd: error: " + flag($0) + $0.message }.joined(separator: "\n"),
                                count: error.errors.count)
        }
    }
}
