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
    /// `.build/<triple>/debug/serializerd`, beside the running test executable.
    public static var url: URL {
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
        let errData = DrainedPipe(errors)
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let stderrBytes = errData.wait()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: [UInt8](outData), stderr: [UInt8](stderrBytes))
    }
}

/// Reads a pipe to its end on another thread, so stdout and stderr cannot deadlock.
final class DrainedPipe: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ pipe: Pipe) {
        Thread { [self] in
            data = pipe.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
