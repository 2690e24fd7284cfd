import Foundation

/// Runs the built `serializerd` binary (next to the test bundle) with a deadline.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: [UInt8]
    public let stderr: [UInt8]
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

public enum ServerBinary {
    /// `.build/<triple>/debug/serializerd`, beside the running test executable, or
    /// `$SERIALIZERD_TEST_BINARY` (to run a test against another build, such as the last
    /// release's, and see it fail there).
    public static var url: URL {
        if let other = ProcessInfo.processInfo.environment["SERIALIZERD_TEST_BINARY"], !other.isEmpty {
            return URL(fileURLWithPath: other)
        }
        let exe = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments[0])
        var dir = exe.deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("serializerd").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("serializerd")
    }

    /// Runs with `stdin` piped in; kills the process after `timeout` seconds. Another
    /// `executable` (a shell, a launcher) may start the daemon; `environment` is added.
    public static func run(_ arguments: [String], stdin: [UInt8] = [], timeout: TimeInterval = 20,
                           executable: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable ?? url
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = DispatchTime.now() + timeout
        DispatchQueue.global().asyncAfter(deadline: deadline) { if process.isRunning { process.terminate() } }
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdin))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let errData = DrainedPipe(errors), outData = DrainedPipe(output)
        process.waitUntilExit()
        // A daemon another test spawns at the same moment can inherit a copy of these
        // pipes' write ends and hold them open long after this child has exited: once it
        // has, what it wrote is read for a moment more, not until every copy closes.
        return CommandResult(status: process.terminationStatus, stdout: [UInt8](outData.wait(afterExit: 5)),
                             stderr: [UInt8](errData.wait(afterExit: 5)))
    }
}

/// Reads a pipe to its end on another thread, so stdout and stderr cannot deadlock.
final class DrainedPipe: @unchecked Sendable {
    private let data = Locked(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ pipe: Pipe) {
        Thread { [data, done] in
            let handle = pipe.fileHandleForReading
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.update { $0.append(chunk) }
            }
            done.signal()
        }.start()
    }

    /// What was written, once the pipe ends or, at the latest, `seconds` from now (the
    /// writer has exited; only a stray copy of the write end can keep the pipe open).
    func wait(afterExit seconds: Double) -> Data {
        _ = done.wait(timeout: .now() + seconds)
        return data.current
    }
}
