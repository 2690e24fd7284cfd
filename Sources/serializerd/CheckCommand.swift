import ArgumentParser
import Proxy

/// `serializerd check`: load and validate the configuration without starting.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate the configuration file and exit (0 when valid)."
    )

    @OptionGroup var config: ConfigOptions

    func run() throws {
        do {
            let loaded = try config.load(environment: ProcessEnvironment.current)
            StandardStreams.write(Array("\(loaded.source): ok (\(loaded.routes.count) routes)\n".utf8))
        } catch let failure as ConfigFailure {
            StandardStreams.write(Array((failure.message + "\n").utf8), fd: 2)
            throw ExitCode(1)
        }
    }
}
