import HTTPCore
import Serializers
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `log.format` and `log.level`, shared by every thread's logging and changed on
/// reload. Read once per line (an atomic load).
public final class LogOutput: Sendable {
    public enum Format: UInt8, Sendable {
        /// One JSON object per line; `text`: `key=value` lines; `console`: `text`, but a
        /// request is one aligned, coloured line (a person at a terminal).
        case json = 0, text = 1, console = 2
    }

    private let formatRaw = Atomic<UInt8>(Format.json.rawValue)
    private let levelRaw = Atomic<UInt8>(LogOutput.rank(.info))
    /// Where lines go: stdout unless a test or tool says otherwise.
    let fd: Int32
    /// sd-daemon priority prefixes (`<6>`) when stdout is the journal (JOURNAL_STREAM),
    /// so `journalctl -p warning` filters; `-o cat` still shows plain JSON after them.
    let journalPrefix: Bool

    public init(fd: Int32 = 1, environment: [String: String] = [:]) {
        self.fd = fd
        journalPrefix = LogOutput.isJournal(fd: fd, environment: environment)
    }

    /// Whether lines go to a terminal (`log.format: auto` picks the console format then).
    public var isTerminal: Bool { isatty(fd) == 1 }

    public var format: Format { Format(rawValue: formatRaw.load(ordering: .relaxed)) ?? .json }

    public var level: Logger.Level {
        Logger.Level.allCases.first { LogOutput.rank($0) == levelRaw.load(ordering: .relaxed) } ?? .info
    }

    public func configure(format: Format, level: Logger.Level) {
        formatRaw.store(format.rawValue, ordering: .relaxed)
        levelRaw.store(LogOutput.rank(level), ordering: .relaxed)
    }

    @inline(__always) public func admits(_ level: Logger.Level) -> Bool {
        LogOutput.rank(level) >= levelRaw.load(ordering: .relaxed)
    }

    static func rank(_ level: Logger.Level) -> UInt8 {
        switch level {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }

    /// syslog priority for the journal prefix.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Writes whole lines: a write(2) each, split only between lines and at most
    /// PIPE_BUF bytes, so lines from different threads never interleave in a pipe.
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            while start < buffer.count {
                var end = min(buffer.count, start + Int(PIPE_BUF))
                if end < buffer.count {
                    // Back up to the last newline in the chunk; a single longer line goes alone.
                    var cut = end
                    while cut > start && buffer[cut - 1] != 0x0A { cut -= 1 }
                    if cut > start {
                        end = cut
                    } else {
                        end = start
                        while end < buffer.count && buffer[end] != 0x0A { end += 1 }
                        end = min(buffer.count, end + 1)
                    }
                }
                var offset = start
                while offset < end {
                    let n = Glibc.write(fd, buffer.baseAddress! + offset, end - offset)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { return }   // stdout gone: logging must never stop serving
                    offset += n
                }
                start = end
            }
        }
    }

    static func isJournal(fd: Int32, environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}

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

/// RFC 3339 UTC timestamps with milliseconds; the date-and-seconds part is cached,
/// since a busy worker logs many lines within the same second.
struct LogClock {
    private var cachedSecond: Int = -1
    private var cachedPrefix: [UInt8] = []

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` as bytes.
    mutating func format(_ unixSeconds: Double) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.length) { buffer, count in
            count = write(unixSeconds, to: buffer.baseAddress!)
        }
    }

    /// The most bytes `write` writes: 24 for years 0–9999, more only for a clock gone
    /// far out of range (a signed nine-digit year).
    static let length = 32

    /// The same, written at `p` (room for `length` bytes); returns how many. The event
    /// JSON writer puts it straight into its buffer.
    mutating func write(_ unixSeconds: Double, to p: UnsafeMutablePointer<UInt8>) -> Int {
        let second = Int(unixSeconds.rounded(.down))
        let millis = min(999, max(0, Int((unixSeconds - Double(second)) * 1000)))
        if second != cachedSecond {
            cachedSecond = second
            let full = UTCTimestamp.format(unixSeconds: Double(second), fraction: .milliseconds)
            cachedPrefix = Array(full.utf8.dropLast(4))   // "…:SS." without "000Z"
        }
        let n = cachedPrefix.count
        cachedPrefix.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: n) }
        p[n] = UInt8(ascii: "0") + UInt8(millis / 100)
        p[n + 1] = UInt8(ascii: "0") + UInt8(millis / 10 % 10)
        p[n + 2] = UInt8(ascii: "0") + UInt8(millis % 10)
        p[n + 3] = UInt8(ascii: "Z")
        return n + 4
    }
}
