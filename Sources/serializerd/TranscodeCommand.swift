#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import HTTPCore
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
            serializer's first default type is assumed (application/json for json, none for \
            raw and compound); --content-type '' sends none, like an upstream that sent none. \
            Exit 0 on success, \
            1 when the serializer fails (the problem document is printed on stdout).
            """
    )

    @Option(help: "Serializer name: json, xml, plist, image, form, text, raw, compound.")
    var serializer: String

    @Option(name: .customLong("content-type"), help: "The upstream Content-Type header value ('' for none; default: the serializer's first default type).")
    var contentType: String?

    @Option(help: "The upstream status code.")
    var status: Int = 200

    @Option(name: .customLong("option"), help: "A response setting as key=value (repeatable).")
    var options: [String] = []

    @Option(name: .customLong("max-response-body"),
            help: "The output cap, as the config's limits.max_response_body: a size like 512KiB or 64MiB (default 32MiB).")
    var maxResponseBody: String?

    @Flag(help: "Print what the serialization cost to stderr as one JSON line: input and output bytes, seconds, and the peak memory it added (also over the input).")
    var stats = false

    @Argument(help: "Input file, or - for stdin.")
    var file: String = "-"

    /// `--content-type ''` is no header at all; no flag is the serializer's own type.
    var upstreamContentType: String? {
        guard let contentType else { return (try? SerializerName(parsing: serializer)).flatMap(ResponseSerializerRegistry.assumedContentType) }
        return contentType.isEmpty ? nil : contentType
    }

    func run() throws {
        var settings = ResponseSettings()
        do { settings.serializer = try SerializerName(parsing: serializer) } catch { throw ValidationError("--serializer: " + error.reason) }
        var canonical = false
        var numbers: NumberGuard.Mode?
        for option in options {
            if option.hasPrefix("canonical=") {
                canonical = option == "canonical=true"
                continue
            }
            if option.hasPrefix("numbers=") {
                guard let mode = NumberGuard.Mode(rawValue: String(option.dropFirst("numbers=".count))) else {
                    throw ValidationError("--option numbers: expected keep, string or reject, found '\(option.dropFirst("numbers=".count))'")
                }
                numbers = mode
                continue
            }
            do { try settings.apply(option: option) } catch { throw ValidationError(error.message) }
        }
        guard (100...599).contains(status) else { throw ValidationError("--status must be 100-599") }
        if let maxResponseBody {
            guard let cap = Units.bytes(maxResponseBody), cap > 0 else {
                throw ValidationError("--max-response-body: expected a positive size like 512KiB or 64MiB, found '\(maxResponseBody)'")
            }
            settings.maxOutput = cap
        }
        // The daemon's allocator settings, so the cost here is the cost a route pays.
        MallocTuning.apply()
        // Like a route's upstream body: over the cap is upstream-body-too-large, found
        // before the whole input is read (`/dev/zero`, endless stdin).
        let body: [UInt8]
        do { body = try StandardStreams.readAll(path: file, limit: settings.maxOutput) } catch let error as InputTooLarge {
            StandardStreams.write(ProblemDocument.render(.upstreamBodyTooLarge(limit: error.limit, url: nil)) + [0x0A])
            throw ExitCode(1)
        }
        let responseSerializer: any ResponseSerializer
        do { responseSerializer = try ResponseSerializerRegistry.make(settings) } catch { throw ValidationError(error.message) }

        if numbers == .keep && canonical {
            throw ValidationError("--option numbers=keep cannot be combined with canonical=true (canonical output would round the numbers it keeps); use string or reject")
        }
        let meter = stats ? CostMeter() : nil
        var result = responseSerializer.serialize(UpstreamResponse(status: status, contentType: upstreamContentType, body: body))
        _ = NumberGuard.apply(&result, mode: numbers ?? (canonical ? .reject : .keep))
        meter?.report(input: body.count, output: result.value?.bytes.count ?? 0, succeeded: result.succeeded)
        if result.succeeded, var value = result.value {
            if canonical {
                do { value = try value.canonicalized() } catch {
                    try emitProblem(.serializationFailed(serializer: result.serializer, detail: error.description, underlying: nil),
                                    body: body, parsed: nil, settings: settings)
                }
            }
            // The document, then its newline: `bytes + [0x0A]` would copy the whole output.
            StandardStreams.write(value.bytes)
            StandardStreams.write([0x0A])
            return
        }
        try emitProblem(result.error ?? .serializationFailed(serializer: result.serializer, detail: "no value", underlying: nil),
                        body: body, parsed: result.value, settings: settings)
    }

    func emitProblem(_ error: SerializationError, body: [UInt8], parsed: NormalizedJSON?, settings: ResponseSettings) throws -> Never {
        let evidence = UpstreamEvidence(UpstreamResponse(status: status, contentType: upstreamContentType, body: body), shownURL: nil, parsed: parsed)
        StandardStreams.write(ProblemDocument.render(.response(error, upstream: evidence), hint: settings.hint(for: error)) + [0x0A])
        throw ExitCode(1)
    }
}

/// `transcode --stats`: one serialization's cost, measured around it. Peak memory comes
/// from the kernel's high-water mark, reset just before the serialization starts.
struct CostMeter {
    let started = Clock.now()
    let rssBefore: Int

    init() {
        // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0).
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        if fd >= 0 {
            _ = "5".withCString { Glibc.write(fd, $0, 1) }
            close(fd)
        }
        rssBefore = Self.kilobytes("VmRSS")
    }

    func report(input: Int, output: Int, succeeded: Bool) {
        let seconds = Clock.now() - started
        let added = max(0, Self.kilobytes("VmHWM") - rssBefore) * 1024
        let perByte = input > 0 ? (Double(added) / Double(input) * 1000).rounded() / 1000 : 0
        let line = "{\"input_bytes\":\(input),\"output_bytes\":\(output),\"succeeded\":\(succeeded),"
            + "\"microseconds\":\(Int((seconds * 1e6).rounded())),\"peak_added_bytes\":\(added),"
            + "\"peak_added_per_input_byte\":\(perByte)}\n"
        StandardStreams.write(Array(line.utf8), fd: 2)
    }

    static func kilobytes(_ field: String) -> Int {
        guard let status = try? StandardStreams.readAll(path: "/proc/self/status") else { return 0 }
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
