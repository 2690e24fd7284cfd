import ArgumentParser
import Proxy
import Serializers

/// `serializerd transcode`: one response serializer, offline, on a file or stdin.
struct TranscodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Run one response serializer on a file (or stdin) and print the JSON or the problem document.",
        discussion: """
            Options are the route's `response:` keys, e.g. --option remove_null_values=true, \
            --option acceptable_status_codes=200-299,404, --option serializers=json,xml, \
            --option xml.force_array=/rss/channel/item, --option image.include_data=true; \
            --option canonical=true prints RFC 8785 canonical JSON. Without --content-type the \
            response has no Content-Type, like an upstream that sent none. Exit 0 on success, \
            1 when the serializer fails (the problem document is printed on stdout).
            """
    )

    @Option(help: "Serializer name: json, xml, plist, image, form, text, raw, compound.")
    var serializer: String

    @Option(name: .customLong("content-type"), help: "The upstream Content-Type header value.")
    var contentType: String?

    @Option(help: "The upstream status code.")
    var status: Int = 200

    @Option(name: .customLong("option"), help: "A response setting as key=value (repeatable).")
    var options: [String] = []

    @Argument(help: "Input file, or - for stdin.")
    var file: String = "-"

    func run() throws {
        var settings = ResponseSettings(serializer: serializer)
        var canonical = false
        for option in options {
            if option.hasPrefix("canonical=") {
                canonical = option == "canonical=true"
                continue
            }
            do { try settings.apply(option: option) } catch { throw ValidationError(error.message) }
        }
        guard (100...599).contains(status) else { throw ValidationError("--status must be 100-599") }
        let body = try StandardStreams.readAll(path: file)
        let responseSerializer: any ResponseSerializer
        do { responseSerializer = try ResponseSerializerRegistry.make(settings) } catch { throw ValidationError(error.message) }

        let result = responseSerializer.serialize(UpstreamResponse(status: status, contentType: contentType, body: body))
        if result.succeeded, var value = result.value {
            if canonical {
                do { value = try value.canonicalized() } catch {
                    try emitProblem(.serializationFailed(serializer: result.serializer, detail: error.description, underlying: nil),
                                    body: body, parsed: nil)
                }
            }
            StandardStreams.write(value.bytes + [0x0A])
            return
        }
        try emitProblem(result.error ?? .serializationFailed(serializer: result.serializer, detail: "no value", underlying: nil),
                        body: body, parsed: result.value)
    }

    func emitProblem(_ error: SerializationError, body: [UInt8], parsed: NormalizedJSON?) throws -> Never {
        let evidence = UpstreamEvidence(url: nil, status: status, contentType: contentType, body: body, parsed: parsed)
        StandardStreams.write(ProblemDocument.render(.response(error, upstream: evidence)) + [0x0A])
        throw ExitCode(1)
    }
}
