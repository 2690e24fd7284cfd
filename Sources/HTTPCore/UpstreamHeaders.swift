#if canImport(Glibc)
import Glibc
#endif

/// The final response's header lines as received ("Name: value", CRLF-terminated),
/// parsed only when asked: a normalized reply forwards two or three of them, so the
/// rest never become Strings.
public struct UpstreamHeaders: Sendable, Equatable {
    public var lines: [UInt8]

    public init(lines: [UInt8] = []) { self.lines = lines }

    /// Header lines made from fields (an answer serializerd makes or rewrites).
    public init(fields: [(String, String)]) {
        var lines: [UInt8] = []
        for (name, value) in fields { lines += Array(name.utf8) + Array(": ".utf8) + Array(value.utf8) + [0x0D, 0x0A] }
        self.lines = lines
    }

    /// The fields (name as sent, value without surrounding whitespace) whose raw name
    /// `keep` accepts, in order.
    public func fields(where keep: (UnsafeBufferPointer<UInt8>) -> Bool) -> [(String, String)] {
        var result: [(String, String)] = []
        appendFields(where: keep, to: &result)
        return result
    }

    /// The same, appended to `result`.
    public func appendFields(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout [(String, String)]) {
        forEachField { name, value in
            guard keep(name) else { return }
            result.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    /// The same, leaving out the fields this response's Connection header names
    /// (hop-by-hop: never forwarded). One pass over the lines; the rare response whose
    /// Connection names a field has what was taken filtered after.
    public func appendEndToEndFields(where keep: (UnsafeBufferPointer<UInt8>) -> Bool, to result: inout [(String, String)]) {
        let first = result.count
        var named: HeaderNames?
        forEachField { name, value in
            if HeaderNames.isConnection(name) {
                var options = named ?? HeaderNames([])
                options.addConnectionOptions(value)
                named = options
            }
            guard keep(name) else { return }
            result.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        guard let named, !named.isEmpty else { return }
        var kept = Array(result[..<first])
        for field in result[first...] where !named.contains(field.0) { kept.append(field) }
        result = kept
    }

    /// Each field's raw name and its value without surrounding whitespace, in order.
    public func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        lines.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return }
            var lineStart = 0
            while lineStart < all.count {
                let lineEnd = memchr(base + lineStart, 0x0A, all.count - lineStart)
                    .map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? all.count
                defer { lineStart = lineEnd + 1 }
                guard let found = memchr(base + lineStart, Int32(UInt8(ascii: ":")), lineEnd - lineStart) else { continue }
                let colon = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
                var start = colon + 1, end = lineEnd
                while start < end && (all[start] == 0x20 || all[start] == 0x09) { start += 1 }
                while end > start && (all[end - 1] == 0x20 || all[end - 1] == 0x09 || all[end - 1] == 0x0D) { end -= 1 }
                body(UnsafeBufferPointer(rebasing: all[lineStart..<colon]), UnsafeBufferPointer(rebasing: all[start..<end]))
            }
        }
    }

    /// Every field, in order.
    public var all: [(String, String)] { fields { _ in true } }
}
