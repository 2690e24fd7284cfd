import HTTPCore

/// Replaces the values at `redact_json` pointers in JSON text, tolerantly: the body is
/// evidence of a failure, so it may be truncated, malformed or not JSON past its first
/// byte, and nothing named may survive either way. One pass, linear in the input; bytes
/// outside the redacted values are kept exactly as they came. A value is replaced whole
/// (a container up to its matching bracket, or to the end of the input when it never
/// closes) by the string `"[redacted]"`.
struct JSONRedactor {
    let pointers: [[[UInt8]]]
    let longest: Int

    init(pointers: [[[UInt8]]]) {
        self.pointers = pointers
        longest = pointers.map(\.count).max() ?? 0
    }

    /// One open container. `key` is the member name a value would now belong to.
    struct Frame {
        var isObject: Bool
        var key: [UInt8] = []
        var index = 0
        var expectingKey: Bool
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    /// The redacted text, or nil when no value matched.
    func redact(_ bytes: [UInt8]) -> [UInt8]? {
        var ranges: [Range<Int>] = []
        bytes.withUnsafeBufferPointer { p in
            // Only the first `longest` levels can match; deeper ones are counted, not kept.
            var stack: [Frame] = []
            var untracked = 0
            var i = 0
            while i < p.count {
                let c = p[i]
                if Self.isSpace(c) || c == UInt8(ascii: ":") { i += 1; continue }
                if c == UInt8(ascii: ",") {
                    if untracked == 0, !stack.isEmpty {
                        if stack[stack.count - 1].isObject { stack[stack.count - 1].expectingKey = true } else { stack[stack.count - 1].index += 1 }
                    }
                    i += 1
                    continue
                }
                if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    if untracked > 0 { untracked -= 1 } else if !stack.isEmpty { stack.removeLast() }
                    i += 1
                    continue
                }
                let expectingKey = untracked == 0 && (stack.last?.expectingKey ?? false)
                if expectingKey {
                    // A member name (or whatever stands in its place).
                    if c == UInt8(ascii: "\"") {
                        let end = Self.stringEnd(p, from: i)
                        stack[stack.count - 1].key = Self.unescaped(p, i + 1, max(i + 1, end - 1))
                        i = end
                    } else {
                        i += 1
                    }
                    stack[stack.count - 1].expectingKey = false
                    continue
                }
                // A value starts here.
                if untracked == 0, matches(stack) {
                    let end = Self.valueEnd(p, from: i)
                    ranges.append(i..<end)
                    i = end
                    continue
                }
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    if untracked > 0 || stack.count >= longest {
                        untracked += 1
                    } else {
                        stack.append(Frame(isObject: c == UInt8(ascii: "{"), expectingKey: c == UInt8(ascii: "{")))
                    }
                    i += 1
                } else if c == UInt8(ascii: "\"") {
                    i = Self.stringEnd(p, from: i)
                } else {
                    i = Self.scalarEnd(p, from: i)
                }
            }
        }
        guard !ranges.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var last = 0
        let marker = Array("\"\(Redaction.marker)\"".utf8)
        for range in ranges {
            out += bytes[last..<range.lowerBound]
            out += marker
            last = range.upperBound
        }
        out += bytes[last...]
        return out
    }

    /// The path to the value about to start equals some pointer.
    func matches(_ stack: [Frame]) -> Bool {
        guard !stack.isEmpty else { return false }
        outer: for pointer in pointers where pointer.count == stack.count {
            for (token, frame) in zip(pointer, stack) {
                if token == [UInt8(ascii: "*")] { continue }
                if frame.isObject {
                    if token != frame.key { continue outer }
                } else if token != Array(String(frame.index).utf8) {
                    continue outer
                }
            }
            return true
        }
        return false
    }

    /// Past a string's closing quote (escapes skipped), or the end of the input.
    static func stringEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start + 1
        while i < p.count {
            if p[i] == UInt8(ascii: "\\") { i += 2; continue }
            if p[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return p.count
    }

    /// Past a number or literal: up to the next structural byte or whitespace.
    static func scalarEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start + 1
        while i < p.count {
            let c = p[i]
            if isSpace(c) || c == UInt8(ascii: ",") || c == UInt8(ascii: ":") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]")
                || c == UInt8(ascii: "{") || c == UInt8(ascii: "[") || c == UInt8(ascii: "\"") { return i }
            i += 1
        }
        return p.count
    }

    /// Past one whole value: a container to its matching bracket (strings skipped), or
    /// the end of the input when it never closes.
    static func valueEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let c = p[start]
        if c == UInt8(ascii: "\"") { return stringEnd(p, from: start) }
        guard c == UInt8(ascii: "{") || c == UInt8(ascii: "[") else { return scalarEnd(p, from: start) }
        var depth = 0
        var i = start
        while i < p.count {
            switch p[i] {
            case UInt8(ascii: "\""): i = stringEnd(p, from: i); continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return i + 1 }
            default: break
            }
            i += 1
        }
        return p.count
    }

    /// A member name's bytes with JSON escapes resolved (`\u` as UTF-8, surrogate pairs
    /// joined), so a name written `"pass\u0077ord"` still matches `/password`.
    static func unescaped(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> [UInt8] {
        var out: [UInt8] = []
        var i = start
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= end else { return nil }
            var v: UInt32 = 0
            for k in at..<at + 4 {
                guard let d = Hex.value(p[k]) else { return nil }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        while i < end {
            guard p[i] == UInt8(ascii: "\\"), i + 1 < end else { out.append(p[i]); i += 1; continue }
            let e = p[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard var v = hex4(i) else { out.append(e); continue }
                i += 4
                if (0xD800..<0xDC00).contains(v), i + 6 <= end, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u"),
                   let low = hex4(i + 2), (0xDC00..<0xE000).contains(low) {
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out += Array(String(Unicode.Scalar(v).map(Character.init) ?? "\u{FFFD}").utf8)
            default: out.append(e)
            }
        }
        return out
    }
}
