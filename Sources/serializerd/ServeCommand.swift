import ArgumentParser
import HTTPCore
import Logging
import Proxy
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

    func run() throws {
        let environment = ProcessEnvironment.current
        let telemetry = Telemetry(output: LogOutput(fd: 1, environment: environment), version: ServerVersion.string,
                                  startTime: Clock.wall())
        LoggingSystem.bootstrap { [output = telemetry.output] label in LineLogHandler(label: label, output: output) }
        let logger = telemetry.logger()
        let override = try ConfigOptions.listenOverride(flag: listen, environment: environment)
        let loaded: ServerConfig
        do { loaded = try load(environment, override) } catch let failure as ConfigFailure {
            // An event for log pipelines, and the plain message for the person at the terminal.
            logger.critical("config_invalid", metadata: ["error": "\(failure.message)"])
            StandardStreams.write(Array((failure.message + "\n").utf8), fd: 2)
            // EX_CONFIG: the unit's RestartPreventExitStatus stops systemd retrying a broken file.
            throw ExitCode(78)
        }
        let server = Server(config: loaded, telemetry: telemetry) { try load(ProcessEnvironment.current, override) }
        do { try server.run(environment: environment) } catch {
            logger.critical("start_failed", metadata: ["error": "\(error)"])
            StandardStreams.write(Array("serializerd: error: \(error)\n".utf8), fd: 2)
            throw ExitCode(1)
        }
    }

    func load(_ environment: [String: String], _ override: ListenAddress?) throws -> ServerConfig {
        var loaded = try config.load(environment: environment)
        if let override { loaded.listen = override }
        return loaded
    }
}
