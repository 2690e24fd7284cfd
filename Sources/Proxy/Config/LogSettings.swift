import Logging
import Telemetry

public struct LogSettings: Sendable, Equatable {
    /// `auto`: console lines on a terminal, JSON lines otherwise (journald, docker, pipes).
    public enum Format: String, Sendable { case auto, json, text }
    public var format = Format.auto
    public var level = Logger.Level.info

    /// Makes these the settings every log line follows from now on.
    public func apply(to output: LogOutput) {
        let resolved: LogOutput.Format = switch format {
        case .auto: output.isTerminal ? .console : .json
        case .json: .json
        case .text: .text
        }
        output.configure(format: resolved, level: level)
    }
}
