import ArgumentParser
import HTTPCore
import Proxy
import Upstream

/// `serializerd healthcheck [--url URL]`: exit 0 when the daemon's health endpoint
/// answers 200 — for Docker's HEALTHCHECK and other supervisors (no curl in the image).
struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "Ask a running daemon's /-/health endpoint; exit 0 when it is healthy, 1 otherwise."
    )

    @Option(name: .customLong("url"), help: "Health endpoint URL (default: /-/health on the config's listen address, or SERIALIZERD_LISTEN).")
    var url: String?

    @Option(name: .customLong("timeout"), help: "Seconds to wait for the answer.")
    var timeout: Double = 3

    @OptionGroup var config: ConfigOptions

    func run() throws {
        let (target, unixSocket) = try url.map { ($0, nil) } ?? defaultURL(ProcessEnvironment.current)
        switch Probe.get(url: target, timeout: timeout, unixSocket: unixSocket) {
        case .success(200):
            StandardStreams.write(Array("\(target): healthy\n".utf8))
        case .success(let status):
            StandardStreams.write(Array("\(target): unhealthy: HTTP \(status)\n".utf8), fd: 2)
            throw ExitCode(1)
        case .failure(let failure):
            StandardStreams.write(Array("\(target): unreachable: \(failure)\n".utf8), fd: 2)
            throw ExitCode(1)
        }
    }

    /// The address the daemon would listen on, made reachable from this host: a
    /// wildcard bind is asked on loopback, which the default admin.allow admits; a Unix
    /// socket is asked through the socket.
    func defaultURL(_ environment: [String: String]) throws -> (String, String?) {
        let listen: ListenAddress
        if let overridden = (try? ConfigOptions.listenOverride(flag: nil, environment: environment)) ?? nil {
            listen = overridden
        } else {
            do { listen = try config.load(environment: environment, state: ProcessState()).listen } catch let failure as ConfigFailure {
                StandardStreams.write(Array("\(failure.message)\nserializerd healthcheck: pass --url, or a readable --config\n".utf8), fd: 2)
                throw ExitCode(1)
            }
        }
        if let path = listen.unixPath { return ("http://localhost/-/health", path) }
        let host = switch listen.host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::": "[::1]"
        case let other where other.contains(":"): "[\(other)]"
        case let other: other
        }
        return ("http://\(host):\(listen.port)/-/health", nil)
    }
}
