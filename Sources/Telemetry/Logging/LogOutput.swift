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
