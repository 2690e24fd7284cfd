import HTTPCore
import Logging
import Serializers

/// swift-log's handler for everything but request completions (ready, reload, shutdown,
/// config errors): one whole line per event on the shared output, JSON or text as
/// `log.format` says. Metadata keeps the order of the event's keys, sorted; integers,
/// doubles and booleans stay unquoted in JSON.
public struct LineLogHandler: LogHandler {
    let output: LogOutput
    let label: String
    public var metadata: Logger.Metadata = [:]

    public init(label: String, output: LogOutput) {
        self.label = label
        self.output = output
    }

    public var logLevel: Logger.Level {
        get { output.level }
        set { output.configure(format: output.format, level: newValue) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var clock = LogClock()
        var line = LogLine(output: output, level: event.level, message: event.message.description,
                           timestamp: clock.format(Clock.wall()))
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        if let error = event.error { merged["error"] = .string("\(error)") }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .stringConvertible(let convertible) where convertible is Int || convertible is Double || convertible is Bool:
                line.raw(dynamic: key, "\(convertible)")
            case .string(let text): line.string(dynamic: key, text)
            case .stringConvertible(let convertible): line.string(dynamic: key, convertible.description)
            case .array, .dictionary:
                var json: [UInt8] = []
                Self.appendJSON(value, into: &json)
                line.raw(dynamic: key, String(decoding: json, as: UTF8.self))
            }
        }
        line.finish()
        output.write(line.bytes)
    }

    static func appendJSON(_ value: Logger.MetadataValue, into out: inout [UInt8]) {
        switch value {
        case .string(let text): JSONEscaping.appendQuoted(text, to: &out)
        case .stringConvertible(let convertible) where convertible is Int || convertible is Double || convertible is Bool:
            out.append(contentsOf: "\(convertible)".utf8)
        case .stringConvertible(let convertible): JSONEscaping.appendQuoted(convertible.description, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendJSON(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, item)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONEscaping.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                appendJSON(item, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
