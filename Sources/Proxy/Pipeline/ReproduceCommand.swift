import Serializers

/// The `serializerd transcode` command that redoes a refused serialization offline, on
/// the upstream body kept as failure evidence.
enum ReproduceCommand {
    /// `serializerd transcode`'s arguments for this route and this reply: the serializer,
    /// the upstream's Content-Type (`''` when it sent none) and status, every response
    /// setting that differs from the default, and the saved body's file.
    static func arguments(_ reply: UpstreamResponse, route: Route, file: String) -> [String] {
        var arguments = ["--serializer", route.response.serializer.rawValue, "--content-type", reply.contentType ?? "",
                         "--status", String(reply.status)]
        for option in route.response.optionArguments { arguments += ["--option", option] }
        if route.output.canonical { arguments += ["--option", "canonical=true"] }
        if let numbers = route.output.numbers { arguments += ["--option", "numbers=" + numbers.rawValue] }
        if route.response.maxOutput != OutputBudget.defaultCap { arguments += ["--max-response-body", String(route.response.maxOutput)] }
        arguments.append(file)
        return arguments
    }

    /// A file name for the saved body: the request id with anything but letters, digits,
    /// `.`, `_` and `-` replaced (a client's X-Request-Id may hold `/` or quotes).
    static func bodyFileName(_ requestID: String) -> String {
        let safe = requestID.unicodeScalars.map { c -> Character in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "." || c == "_" || c == "-") ? Character(c) : "_"
        }
        return "failure-" + String(safe) + ".body"
    }

    /// The arguments as one line for a POSIX shell: single-quoted where needed.
    static func shellLine(_ arguments: [String]) -> String {
        arguments.map { argument in
            let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_./:=,+@%".unicodeScalars.contains($0))
            }
            guard !plain else { return argument }
            var quoted = "'"
            for c in argument { quoted += c == "'" ? "'\\''" : String(c) }
            return quoted + "'"
        }.joined(separator: " ")
    }
}
