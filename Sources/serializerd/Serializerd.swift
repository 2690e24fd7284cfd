import ArgumentParser
import HTTPCore

@main
struct Serializerd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serializerd",
        abstract: "A local HTTP proxy that applies AFNetworking-style serializer policies.",
        version: ServerVersion.string,
        subcommands: [ServeCommand.self, CheckCommand.self, TranscodeCommand.self, TapeCommand.self, ContractCommand.self, HealthcheckCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
