import HTTPCore
import Serializers
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One log line under construction: the shared prefix (time, level, message) and
/// fields in the order given, as JSON or as `key=value` text.
struct LogLine {
    var bytes: [UInt8]
    let format: LogOutput.Format
    private var first = true

    init(into buffer: [UInt8] = [], output: LogOutput, level: Logger.Level, message: String, timestamp: [UInt8]) {
        self.init(into: buffer, format: output.format, prefix: output.journalPrefix, level: level, message: message, timestamp: timestamp)
    }

    init(into buffer: [UInt8] = [], format: LogOutput.Format, prefix: Bool, level: Logger.Level, message: String, timestamp: [UInt8]) {
        bytes = buffer
        self.format = format
        if prefix { bytes.append(contentsOf: "<\(LogOutput.priority(level))>".utf8) }
        switch format {
        case .json:
            bytes.append(contentsOf: "{\"ts\":\"".utf8)
            bytes.append(contentsOf: timestamp)
            bytes.append(contentsOf: "\",\"level\":\"".utf8)
            bytes.append(contentsOf: level.rawValue.utf8)
            bytes.append(contentsOf: "\",\"msg\":".utf8)
            JSONEscaping.appendQuoted(message, to: &bytes)
            first = false
        case .text, .console:
            bytes.append(contentsOf: timestamp)
            bytes.append(0x20)
            bytes.append(contentsOf: level.rawValue.uppercased().utf8)
            bytes.append(0x20)
            bytes.append(contentsOf: message.utf8)
        }
    }

    /// Field names are literals: copied as bytes, no String work per line.
    private mutating func key(_ name: StaticString) {
        switch format {
        case .json:
            bytes.append(first ? UInt8(ascii: "\"") : UInt8(ascii: ","))
            if !first { bytes.append(UInt8(ascii: "\"")) }
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
        case .text, .console:
            bytes.append(0x20)
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "="))
        }
        first = false
    }

    /// swift-log metadata keys are not literals.
    private mutating func dynamicKey(_ name: String) {
        switch format {
        case .json:
            bytes.append(contentsOf: first ? "\"".utf8 : ",\"".utf8)
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: "\":".utf8)
        case .text, .console:
            bytes.append(0x20)
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: "="))
        }
        first = false
    }

    mutating func string(_ name: StaticString, _ value: String?) {
        key(name)
        appendValue(value)
    }

    mutating func string(dynamic name: String, _ value: String?) {
        dynamicKey(name)
        appendValue(value)
    }

    private mutating func appendValue(_ value: String?) {
        guard var value else { return null() }
        switch format {
        case .json:
            // Most values (ids, routes, paths, types) need no escape: copy them as they are.
            let plain: Bool = value.withUTF8 { utf8 in
                for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: utf8)
                bytes.append(UInt8(ascii: "\""))
                return true
            }
            if !plain { JSONEscaping.appendQuoted(value, to: &bytes) }
        case .text, .console:
            let plain = !value.isEmpty && value.utf8.allSatisfy { $0 > 0x20 && $0 != UInt8(ascii: "\"") && $0 != 0x7F && $0 != UInt8(ascii: "=") }
            if plain { bytes.append(contentsOf: value.utf8) } else { JSONEscaping.appendQuoted(value, to: &bytes) }
        }
    }

    mutating func int(_ name: StaticString, _ value: Int?) {
        key(name)
        guard let value else { return null() }
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Milliseconds with microsecond precision.
    mutating func milliseconds(_ name: StaticString, _ seconds: Double?) {
        key(name)
        guard let seconds else { return null() }
        NumberText.appendMilliseconds(seconds, to: &bytes)
    }

    mutating func raw(dynamic name: String, _ text: String) {
        dynamicKey(name)
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func null() {
        bytes.append(contentsOf: "null".utf8)
    }

    mutating func finish() {
        if format == .json { bytes.append(UInt8(ascii: "}")) }
        bytes.append(0x0A)
    }
}
