import ArgumentParser
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// `--config PATH`, resolved in DESIGN §2's order: the flag, `$SERIALIZERD_CONFIG`,
/// `./config/serializerd.yaml`, `/etc/serializerd/serializerd.yaml`.
struct ConfigOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "Configuration file.")
    var path: String?

    static let searchPath = ["config/serializerd.yaml", "/etc/serializerd/serializerd.yaml"]

    func resolvedPath(environment: [String: String]) throws -> String {
        if let path { return path }
        if let fromEnvironment = environment["SERIALIZERD_CONFIG"], !fromEnvironment.isEmpty { return fromEnvironment }
        if let found = Self.searchPath.first(where: { access($0, R_OK) == 0 }) { return found }
        throw ConfigFailure(message: "serializerd: error: no configuration file: pass --config PATH, set SERIALIZERD_CONFIG, or create \(Self.searchPath.joined(separator: " or ")) (or try `serializerd serve --upstream URL`)")
    }

    /// `--listen` beats `SERIALIZERD_LISTEN` beats the file's `listen`.
    static func listenOverride(flag: String?, environment: [String: String]) throws -> ListenAddress? {
        guard let text = flag ?? environment["SERIALIZERD_LISTEN"], !text.isEmpty else { return nil }
        guard let address = ListenAddress(text) else {
            throw ValidationError("--listen/SERIALIZERD_LISTEN: expected host:port such as 127.0.0.1:8080, found '\(text)'")
        }
        return address
    }

    /// "cannot open 'x': Permission denied" → "Permission denied".
    static func reason(_ error: Error) -> String {
        let text = "\(error)"
        guard let colon = text.range(of: "': ") else { return text }
        return String(text[colon.upperBound...])
    }

    /// A config file is a page of YAML; anything this large is a mistake (a device, a log).
    static let maxConfigBytes = 1 << 20

    /// The config file, its routes' tapes, jars and reachability taken from `state`.
    func load(environment: [String: String], state: ProcessState) throws -> ServerConfig {
        let path = try resolvedPath(environment: environment)
        let bytes: [UInt8]
        do { bytes = try StandardStreams.readAll(path: path, limit: Self.maxConfigBytes) } catch let error as InputTooLarge {
            throw ConfigFailure(message: "\(path): error: the configuration file is larger than \(error.limit) bytes (1 MiB), the most serializerd reads")
        } catch {
            throw ConfigFailure(message: "\(path): error: cannot read the configuration file (\(Self.reason(error)))")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigFailure(message: "\(path): error: the configuration file is not UTF-8")
        }
        do { return try ConfigLoader.load(yaml: text, file: path, environment: environment, state: state) } catch {
            throw ConfigFailure(message: error.description, count: error.errors.count)
        }
    }
}
