internal import CVector
import HTTPCore

/// Validates JSON and rewrites it as normalized JSON in one pass, without building a tree.
///
/// Output: compact UTF-8, members in source order, number lexemes verbatim, strings
/// with the RFC 8785 escape set (`\"`, `\\`, `\b\f\n\r\t`, other controls as `\u00xx`,
/// everything else literal — so `\/` becomes `/` and `\u00e9` becomes `é`).
/// The output is never longer than the UTF-8 input, which lets the writer skip
/// capacity checks. Nesting is tracked on an explicit stack, so depth is a policy
/// (`maxDepth`), never a stack overflow.
public enum JSONNormalizer {
    public static func normalize(_ input: [UInt8], options: JSONReadOptions = .init()) throws(JSONError) -> [UInt8] {
        try normalize(input, options: options, countingNumbers: false).bytes
    }

    /// The output, and how many of its numbers no double holds exactly (output.numbers)
    /// when the fast path could tell them all; nil when `NumberGuard` must look.
    public static func normalizeNotingNumbers(_ input: [UInt8], options: JSONReadOptions = .init())
        throws(JSONError) -> (bytes: [UInt8], unsafeNumbers: Int?) {
        let made = try normalize(input, options: options, countingNumbers: true)
        return (made.bytes, made.unsafeNumbers)
    }

    /// The output, checked against `contract` as it is written where the fast path runs
    /// (`vouch` then says how far it meets it), and its unsafe numbers when counted.
    public static func normalize(_ input: [UInt8], options: JSONReadOptions = .init(), countingNumbers: Bool,
                                 checking contract: OutputContract? = nil)
        throws(JSONError) -> (bytes: [UInt8], unsafeNumbers: Int?, vouch: ContractVouch?) {
        let detected = input.withUnsafeBufferPointer { JSONEncodingDetection.detect($0) }
        if case .utf8(let bom) = detected {
            return try normalizeUTF8(input, from: bom, options: options, countingNumbers: countingNumbers, checking: contract)
        }
        let utf8 = try input.withUnsafeBufferPointer { (b) throws(JSONError) in
            try JSONEncodingDetection.transcodeToUTF8(b, detected)
        }
        return try normalizeUTF8(utf8, from: 0, options: options, countingNumbers: countingNumbers, checking: contract)
    }

    static func normalizeUTF8(_ input: [UInt8], from start: Int, options: JSONReadOptions, countingNumbers: Bool,
                              checking contract: OutputContract? = nil) throws(JSONError)
        -> (bytes: [UInt8], unsafeNumbers: Int?, vouch: ContractVouch?) {
        // The fast path only says valid or not: invalid input is read again here, for the
        // error and its offset. (Dropping nulls is left to this path too.)
        if !options.removeNullValues,
           let made = fastNormalizeCounting(input, from: start, options: options, countingNumbers: countingNumbers, checking: contract) {
            return (made.bytes, made.unsafe, made.vouch)
        }
        return (try normalizeUTF8(input, from: start, options: options, scan: VectorScan.self), nil, nil)
    }

    /// `scan` chooses the inner loops; tests run `ByteScan` against the same cases.
    static func normalizeUTF8<S: JSONByteScan>(_ input: [UInt8], from start: Int, options: JSONReadOptions, scan: S.Type) throws(JSONError) -> [UInt8] {
        let capacity = max(input.count - start, 1)
        var failure: JSONError?
        let out = input.withUnsafeBufferPointer { inBuf in
            [UInt8](unsafeUninitializedCapacity: capacity) { outBuf, count in
                let core = NormalizerCore(input: inBuf, start: start, output: outBuf.baseAddress!, options: options)
                do throws(JSONError) {
                    count = try core.run(S.self)
                } catch {
                    failure = error
                    count = 0
                }
            }
        }
        if let failure { throw failure }
        return out
    }
}

/// The normalizer: one state machine in one function, so the cursors (`i` in, `w` out),
/// the depth and the state live in registers — split into helper methods, the compiler
/// kept them in `self` and stored and reloaded them around every output byte.
struct NormalizerCore: ~Copyable {
    let p: UnsafePointer<UInt8>
    let n: Int
    let input: UnsafeBufferPointer<UInt8>
    let o: UnsafeMutablePointer<UInt8>
    let options: JSONReadOptions
    let start: Int
    /// One entry per open container: bit 0 = array, bit 1 = a member was written.
    /// A raw buffer: Array's checks on every token cost ~10% here.
    let stack: UnsafeMutablePointer<UInt8>

    static let isArray: UInt8 = 1, hasMember: UInt8 = 2

    init(input: UnsafeBufferPointer<UInt8>, start: Int, output: UnsafeMutablePointer<UInt8>, options: JSONReadOptions) {
        self.input = input
        self.p = input.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.n = input.count
        self.start = start
        self.o = output
        self.options = options
        stack = .allocate(capacity: options.maxDepth + 1)
    }

    deinit { stack.deallocate() }

    func fail(_ message: String, at offset: Int) -> JSONError {
        JSONError(message, offset: offset, in: input)
    }

    func unexpected(_ expected: String, at i: Int) -> JSONError {
        guard i < n else { return fail("unexpected end of input, expected \(expected)", at: i) }
        let c = p[i]
        let shown = (c >= 0x20 && c < 0x7F) ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16))"
        return fail("unexpected \(shown), expected \(expected)", at: i)
    }

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    /// Where the machine is: at a value's first byte, at an object member's key, at an
    /// array element, inside a string (a key or a value), or after a complete value.
    enum State { case value, member, element, string, after }

    /// Normalizes the whole input; returns the output length.
    func run<S: JSONByteScan>(_: S.Type) throws(JSONError) -> Int {
        let p = self.p, n = self.n, o = self.o, stack = self.stack
        let dropNulls = options.removeNullValues
        var i = start, w = 0, depth = 0
        var state = State.value
        /// Inside `.string`: whether it is a key, and where the member began (so a member
        /// whose value is a dropped null can be taken back).
        var inKey = false, memberMark = 0
        /// The innermost open container's flags; `stack[d]` keeps those of the container
        /// around level `d` while it is open.
        var top: UInt8 = 0
        S.skipWhitespace(p, n, &i)
        if !options.allowFragments, i < n, p[i] != UInt8(ascii: "{"), p[i] != UInt8(ascii: "[") {
            throw fail("top-level value is not an object or array, and fragments are not allowed", at: i)
        }
        machine: while true {
            switch state {
            case .value:
                guard i < n else { throw unexpected("a value", at: i) }
                let c = p[i]
                switch c {
                case UInt8(ascii: "\""):
                    inKey = false
                    state = .string
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard depth < options.maxDepth else {
                        throw fail("nesting deeper than the limit of \(options.maxDepth) (limits.max_json_depth)", at: i)
                    }
                    let array = c == UInt8(ascii: "[")
                    o[w] = c; w += 1; i += 1
                    S.skipWhitespace(p, n, &i)
                    let close = c + 2   // "{" + 2 = "}", "[" + 2 = "]"
                    if i < n && p[i] == close {
                        i += 1; o[w] = close; w += 1
                        state = .after
                    } else {
                        stack[depth] = top
                        top = array ? NormalizerCore.isArray : 0
                        depth += 1
                        state = array ? .element : .member
                    }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let begin = i
                    let runs = S.digitRuns(p, n, at: begin)
                    if c == UInt8(ascii: "-") { i += 1 }
                    guard i < n, Self.isDigit(p[i]) else { throw unexpected("a digit", at: i) }
                    if p[i] == UInt8(ascii: "0") { i += 1 } else { runs.skip(p, n, &i, S.self) }
                    if i < n && p[i] == UInt8(ascii: ".") {
                        i += 1
                        guard i < n, Self.isDigit(p[i]) else { throw unexpected("a digit after the decimal point", at: i) }
                        runs.skip(p, n, &i, S.self)
                    }
                    if i < n && (p[i] | 0x20) == UInt8(ascii: "e") {
                        i += 1
                        if i < n && (p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-")) { i += 1 }
                        guard i < n, Self.isDigit(p[i]) else { throw unexpected("a digit in the exponent", at: i) }
                        runs.skip(p, n, &i, S.self)
                    }
                    copySpan(from: begin, count: i - begin, &w)
                    // Numbers come in arrays of numbers (coordinates, series): straight on
                    // to the next one, past the states a separator goes through.
                    if top & NormalizerCore.isArray != 0, i + 1 < n, p[i] == UInt8(ascii: ","),
                       p[i + 1] == UInt8(ascii: "-") || Self.isDigit(p[i + 1]) {
                        o[w] = UInt8(ascii: ","); w += 1; i += 1
                        continue machine
                    }
                    state = .after
                case UInt8(ascii: "t"):
                    try copyLiteral("true", &i, &w)
                    state = .after
                case UInt8(ascii: "f"):
                    try copyLiteral("false", &i, &w)
                    state = .after
                case UInt8(ascii: "n"):
                    try copyLiteral("null", &i, &w)
                    state = .after
                default:
                    throw unexpected("a value", at: i)
                }

            case .member:
                guard i < n, p[i] == UInt8(ascii: "\"") else { throw unexpected("a string key", at: i) }
                memberMark = w
                if top & NormalizerCore.hasMember != 0 { o[w] = UInt8(ascii: ","); w += 1 }
                inKey = true
                state = .string

            case .element:
                if dropNulls && i < n && p[i] == UInt8(ascii: "n") {
                    let mark = w
                    try copyLiteral("null", &i, &w)
                    w = mark
                    state = .after
                } else {
                    if top & NormalizerCore.hasMember != 0 { o[w] = UInt8(ascii: ","); w += 1 }
                    top |= NormalizerCore.hasMember
                    state = .value
                }

            case .string:
                // At the opening quote; re-escapes to the normalized set.
                let open = i
                o[w] = UInt8(ascii: "\""); w += 1
                i += 1
                copy: while true {
                    S.copyPlain(p, n, &i, o, &w)
                    guard i < n else { throw fail("unterminated string", at: open) }
                    // Non-ASCII text comes in runs (a word, a sentence): the whole run is
                    // validated, then copied at once.
                    if p[i] >= 0x80 {
                        var j = i
                        repeat {
                            let length = j + 4 <= n
                                ? UTF8Validation.sequenceLength(word: UInt32(littleEndian: UnsafeRawPointer(p + j).loadUnaligned(as: UInt32.self)))
                                : UTF8Validation.sequenceLength(p, j, n)
                            guard let length else { throw fail("invalid UTF-8 in string", at: j) }
                            j += length
                        } while j < n && p[j] >= 0x80
                        copySpan(from: i, count: j - i, &w)
                        i = j
                        guard i < n else { throw fail("unterminated string", at: open) }
                    }
                    let c = p[i]
                    if c == UInt8(ascii: "\"") {
                        i += 1
                        o[w] = c; w += 1
                        break copy
                    } else if c == UInt8(ascii: "\\") {
                        try copyEscape(&i, &w)
                    } else if c < 0x20 {
                        throw fail("unescaped control character in string", at: i)
                    }
                }
                guard inKey else { state = .after; continue machine }
                S.skipWhitespace(p, n, &i)
                guard i < n, p[i] == UInt8(ascii: ":") else { throw unexpected("':'", at: i) }
                i += 1
                o[w] = UInt8(ascii: ":"); w += 1
                S.skipWhitespace(p, n, &i)
                if dropNulls && i < n && p[i] == UInt8(ascii: "n") {
                    try copyLiteral("null", &i, &w)
                    w = memberMark
                    state = .after
                } else {
                    top |= NormalizerCore.hasMember
                    state = .value
                }

            case .after:
                // Close containers or move to the next member/element.
                guard depth > 0 else { break machine }
                let isArray = top & NormalizerCore.isArray != 0
                S.skipWhitespace(p, n, &i)
                guard i < n else { throw unexpected(isArray ? "',' or ']'" : "',' or '}'", at: i) }
                let c = p[i]
                if c == UInt8(ascii: ",") {
                    i += 1
                    S.skipWhitespace(p, n, &i)
                    state = isArray ? .element : .member
                } else if c == (isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
                    i += 1; o[w] = c; w += 1; depth -= 1
                    top = stack[depth]
                } else {
                    throw unexpected(isArray ? "',' or ']'" : "',' or '}'", at: i)
                }
            }
        }
        S.skipWhitespace(p, n, &i)
        if i < n { throw unexpected("end of input after the top-level value", at: i) }
        return w
    }

    /// Copies `count` input bytes from `from` to the output at `w`, in 16-byte stores when
    /// the input has that many bytes past the span: the last store may run past the span,
    /// never past the output (`w ≤ from - start`).
    @inline(__always)
    func copySpan(from: Int, count: Int, _ w: inout Int) {
        typealias Chunk = SIMD16<UInt8>
        if from + (count + 15) & ~15 <= n {
            var k = 0
            repeat {
                UnsafeMutableRawPointer(o + w + k).storeBytes(of: UnsafeRawPointer(p + from + k).loadUnaligned(as: Chunk.self), as: Chunk.self)
                k += 16
            } while k < count
        } else {
            (o + w).update(from: p + from, count: count)
        }
        w += count
    }

    @inline(__always)
    func copyLiteral(_ word: StaticString, _ i: inout Int, _ w: inout Int) throws(JSONError) {
        let len = word.utf8CodeUnitCount
        let bytes = word.utf8Start
        guard i + len <= n else { throw fail("invalid literal, expected '\(word)'", at: i) }
        for k in 0..<len where p[i + k] != bytes[k] {
            throw fail("invalid literal, expected '\(word)'", at: i + k)
        }
        (o + w).update(from: p + i, count: len)
        w += len
        i += len
    }

    func copyEscape(_ i: inout Int, _ w: inout Int) throws(JSONError) {
        let at = i
        guard i + 1 < n else { throw fail("unterminated escape sequence", at: at) }
        let e = p[i + 1]
        i += 2
        var cp: UInt32
        switch e {
        case UInt8(ascii: "\""): cp = 0x22
        case UInt8(ascii: "\\"): cp = 0x5C
        case UInt8(ascii: "/"): cp = 0x2F
        case UInt8(ascii: "b"): cp = 0x08
        case UInt8(ascii: "f"): cp = 0x0C
        case UInt8(ascii: "n"): cp = 0x0A
        case UInt8(ascii: "r"): cp = 0x0D
        case UInt8(ascii: "t"): cp = 0x09
        case UInt8(ascii: "u"):
            cp = try hex4(at: i)
            i += 4
            if cp >= 0xD800 && cp < 0xDC00 {
                guard i + 6 <= n, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") else {
                    throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
                }
                let low = try hex4(at: i + 2)
                guard low >= 0xDC00 && low < 0xE000 else {
                    throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            } else if cp >= 0xDC00 && cp < 0xE000 {
                throw fail("lone surrogate \\u\(String(cp, radix: 16, uppercase: true)) in string", at: at)
            }
        default:
            throw fail("invalid escape sequence", at: at)
        }
        JSONEscaping.writeScalar(cp, into: o, at: &w)
    }

    func hex4(at k: Int) throws(JSONError) -> UInt32 {
        guard k + 4 <= n else { throw fail("truncated \\u escape", at: k - 2) }
        var v: UInt32 = 0
        for j in 0..<4 {
            guard let d = Hex.value(p[k + j]) else { throw fail("invalid hex digit in \\u escape", at: k + j) }
            v = v << 4 | UInt32(d)
        }
        return v
    }
}
