import Foundation

/// A process under test that prints a line we wait for (the stub's port, the daemon's
/// `ready` event), stopped by signal when the test ends.
public final class Spawned: @unchecked Sendable {
    public let process = Process()
    private let output = Pipe()
    private var buffer = Data()
    private let lock = NSLock()

    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self, !chunk.isEmpty else { return }
            self.lock.lock(); self.buffer.append(chunk); self.lock.unlock()
        }
    }

    /// Everything printed so far.
    public var text: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Waits (bounded) until a printed line satisfies `match`.
    public func waitForLine(timeout: TimeInterval = 20, _ match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = lines().first(where: match) { return line }
            if !alive { return lines(includingUnfinished: true).first(where: match) }
            usleep(20_000)
        }
        return nil
    }

    /// The lines printed so far. A line still being written is left out unless asked for:
    /// a match on half a line would read a value before it is whole.
    public func lines(includingUnfinished: Bool = false) -> [String] {
        var printed = text
        if !includingUnfinished, let end = printed.lastIndex(where: \.isNewline) {
            printed = String(printed[...end])
        } else if !includingUnfinished {
            return []
        }
        // A terminal ends lines with \r\n: one Character, so split on newlines, not "\n".
        return printed.split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Waits (bounded) until everything printed so far satisfies `condition`.
    public func waitForText(timeout: TimeInterval = 20, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            usleep(20_000)
        }
        return condition(text)
    }

    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// SIGTERM, then SIGKILL if it has not exited within `timeout`. Returns the exit
    /// status (128 + signal when killed).
    @discardableResult
    public func stop(timeout: TimeInterval = 15) -> Int32 {
        signal(SIGTERM)
        return waitForExit(timeout: timeout) ?? {
            signal(SIGKILL)
            return waitForExit(timeout: 5) ?? -1
        }()
    }

    /// Polls the process's state in /proc (Foundation's `isRunning` can lag the exit).
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !alive {
                process.waitUntilExit()
                return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
            }
            usleep(10_000)
        }
        return nil
    }

    /// False once the process has exited (a zombie counts as exited).
    public var alive: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
    }

    deinit { if alive { kill(process.processIdentifier, SIGKILL) } }
}

/// The Python stub upstream in Tests/Fixtures.
public enum StubUpstream {
    /// `arguments`: `--tls CERT KEY [--client-ca CA] [--tls12]` for HTTPS. `script`: another
    /// upstream under Tests/Fixtures that prints its port first, the same way.
    public static func start(_ arguments: [String] = [], script: String = "stub_upstream.py") throws -> (Spawned, Int) {
        let stub = try Spawned(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u", Fixture.path(script)] + arguments)
        guard let line = stub.waitForLine({ Int($0) != nil }), let port = Int(line) else {
            throw TestFailure("the stub upstream did not start")
        }
        return (stub, port)
    }
}

/// serializerd with a config written to a temporary file.
public enum DaemonUnderTest {
    public static func start(config yaml: String, environment: [String: String]? = nil) throws -> (Spawned, Int, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("serializerd-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let (daemon, port) = try start(arguments: ["serve", "--config", path], environment: environment)
        return (daemon, port, path)
    }

    /// Any `serve` command line whose listen address is 127.0.0.1 (port 0 for any).
    /// `onATerminal`: stdout is a pseudo-terminal (Tests/Fixtures/on_a_terminal.py relays it).
    public static func start(arguments: [String], environment: [String: String]? = nil, onATerminal: Bool = false) throws -> (Spawned, Int) {
        let daemon = onATerminal
            ? try Spawned(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u", Fixture.path("on_a_terminal.py"), ServerBinary.url.path] + arguments,
                          environment: environment)
            : try Spawned(ServerBinary.url, arguments, environment: environment)
        // The ready event in either log format: JSON, or text with `listen=host:port`.
        guard let line = daemon.waitForLine({ $0.contains("\"msg\":\"ready\"") || $0.contains(" NOTICE ready ") }),
              let range = line.range(of: #"listen"?[:=]"?127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            throw TestFailure("serializerd did not become ready: \(daemon.text)")
        }
        let port = Int(line[range].split(separator: ":").last!.filter(\.isNumber))!
        return (daemon, port)
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
